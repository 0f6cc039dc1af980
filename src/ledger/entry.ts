import type { CreateExportJobRequest, ExportJob } from "../api/schemas.js";
import { redact } from "../redact.js";
import type { LedgerEntry } from "./store.js";

/** The job without the download URL's pre-signed query, which is a secret. */
export function safeJob(job: ExportJob): ExportJob {
  if (job.download_url === undefined) return job;
  return { ...job, download_url: redact(job.download_url) };
}

/** The entry both stores record for a job just created, stamped `at` (ISO 8601 UTC). */
export function newEntry(
  request: CreateExportJobRequest,
  requestKey: string,
  job: ExportJob,
  createdBy: string | undefined,
  at: string,
): LedgerEntry {
  return {
    job_id: job._id,
    request,
    request_key: requestKey,
    requested_at: at,
    ...(createdBy === undefined ? {} : { created_by: createdBy }),
    status: job.status,
    history: [{ status: job.status, at }],
    job: safeJob(job),
  };
}
