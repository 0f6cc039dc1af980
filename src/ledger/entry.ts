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

/**
 * The changes both stores make to one entry, written once: each store only finds the entry
 * (the file ledger under its lock, PostgreSQL under the row lock) and applies one of these.
 */
export type EntryEdit = (entry: LedgerEntry) => void;

/** The service no longer knows this job: kept for the record, never reused. */
export const markedLost =
  (at: string): EntryEdit =>
  (entry) => {
    entry.lost_at ??= at;
  };

/** The latest job object, with a history step when its status changed. */
export const jobSeen =
  (job: ExportJob, at: string): EntryEdit =>
  (entry) => {
    if (entry.status !== job.status) entry.history.push({ status: job.status, at });
    entry.status = job.status;
    entry.job = safeJob(job);
  };

/** The file is on disk; downloaded again after the retention sweep removed it, it is back. */
export const downloaded =
  (path: string, bytes: number, at: string): EntryEdit =>
  (entry) => {
    entry.file_path = path;
    entry.file_bytes = bytes;
    entry.downloaded_at = at;
    delete entry.file_removed_at;
    delete entry.file_removed_reason;
  };

/** The retention sweep removed the file: the entry keeps its history and the path, marked. */
export const fileRemoved =
  (reason: "age" | "size", at: string): EntryEdit =>
  (entry) => {
    entry.file_removed_at = at;
    entry.file_removed_reason = reason;
  };
