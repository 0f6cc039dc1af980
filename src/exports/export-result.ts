import { DateTime } from "luxon";
import { type ExportJob, isTerminal, targetIdOf } from "../api/schemas.js";
import {
  describeCalls,
  formatByteProgress,
  formatBytes,
  type NextCall,
  nextCall,
} from "../format.js";
import { safeJob } from "../ledger/ledger.js";
import { describeRange } from "./budget-and-range.js";
import { ExportJobFailedError } from "./errors.js";
import type { DownloadInfo } from "./export-download.js";
import type { FollowOutcome } from "./export-flow.js";

/** The export tools' result for a job: its structured fields and the lines the model reads. */

/** Throws the error spec 3.1 calls for when a job failed. */
export function assertNotFailed(job: ExportJob): void {
  if (job.status !== "failed") return;
  const id = targetIdOf(job);
  throw new ExportJobFailedError(
    job._id,
    `Export job ${job._id} (${job.type}${id === undefined ? "" : ` for ${id}`}) failed on the service. A failed job cannot be retried; create a new one with start_export and "force": true.`,
  );
}

/** The shared structured fields of a job result. */
export interface JobResult {
  job: ExportJob;
  /** The job's status, or "downloading": completed, its file not yet local. */
  status: string;
  done: boolean;
  /** The exported range as inclusive calendar dates in the app's zone (absent: no limit). */
  from_date?: string;
  to_date?: string;
  file_path?: string;
  file_bytes?: number;
  resource_uri?: string;
  /** While the file downloads in the background: bytes so far and the announced size. */
  download_progress?: { bytes: number; total_bytes?: number };
  /** A temporary failure after the job was created; the job is intact, next_step continues. */
  error?: string;
  /** A download that failed after an earlier call returned, retried by this one. */
  earlier_download_error?: string;
  next_step: string;
  next_calls: NextCall[];
}

/**
 * Words an error for the model: mcp/error-text.ts's `errorText`, the server's one wording of
 * errors, handed in by the tools (the MCP layer builds on the export flow, not the reverse).
 */
export type ErrorText = (error: unknown, subject: string) => string;

export function jobResult(
  job: ExportJob,
  download: DownloadInfo | undefined,
  zone: string,
  errorText: ErrorText,
  problem?: unknown,
  pending?: { bytes: number; totalBytes?: number | undefined; earlier?: unknown },
): JobResult {
  const downloading = download === undefined && pending !== undefined;
  const next =
    download !== undefined
      ? nextCall("summarize_export", { job_id: job._id })
      : nextCall("check_export", { job_id: job._id, wait_seconds: 30 });
  const result: JobResult = {
    job: safeJob(job),
    status: downloading ? "downloading" : job.status,
    done: isTerminal(job.status) && download !== undefined,
    next_step: describeCalls([next]),
    next_calls: [next],
  };
  const fromDate = zoneDate(job.from, zone);
  const toDate = zoneDate(job.to, zone);
  if (fromDate !== undefined) result.from_date = fromDate;
  if (toDate !== undefined) result.to_date = toDate;
  if (download !== undefined) {
    result.file_path = download.path;
    result.file_bytes = download.bytes;
    result.resource_uri = download.link.uri;
  }
  if (downloading) {
    result.download_progress = {
      bytes: pending.bytes,
      ...(pending.totalBytes === undefined ? {} : { total_bytes: pending.totalBytes }),
    };
  }
  if (problem !== undefined) result.error = errorText(problem, "the export");
  if (pending?.earlier !== undefined) {
    result.earlier_download_error = errorText(
      pending.earlier,
      "an earlier background download of this file",
    );
  }
  return result;
}

/**
 * The one sentence that sums up a followed job, for start_export and check_export alike: saved,
 * still downloading, interrupted by a temporary error, or not finished (after how long a wait).
 */
export function followedSummary(
  outcome: FollowOutcome,
  problem: unknown,
  options: { waitSeconds: number; reused?: boolean },
): string {
  const job = outcome.job;
  if (outcome.download !== undefined) {
    return `Export ${job._id} completed${options.reused === true ? " (reused)" : ""}; ${formatBytes(outcome.download.bytes)} saved.`;
  }
  if (outcome.downloading !== undefined) {
    return `Export ${job._id} is completed; its file is downloading in the background (${formatByteProgress(outcome.downloading.bytes, outcome.downloading.totalBytes)}); call check_export to finish.`;
  }
  if (problem !== undefined) {
    return `Export ${job._id} is ${job.status}; a temporary error interrupted it, call check_export to continue.`;
  }
  const waited = outcome.timedOut ? ` after waiting ${options.waitSeconds}s` : "";
  return `Export ${job._id} is ${job.status}${waited}; call check_export to continue.`;
}

/** The calendar date of an API instant (spec 2.3: ISO 8601) in the app's zone. */
function zoneDate(instant: string | undefined, zone: string): string | undefined {
  if (instant === undefined) return undefined;
  const at = DateTime.fromISO(instant, { setZone: true });
  return at.isValid ? (at.setZone(zone).toISODate() ?? undefined) : undefined;
}

/** A few lines describing the job for the model; the file path appears once. */
export function describeJob(result: JobResult): string {
  const job = result.job;
  const target =
    job.type === "campaign_event_data"
      ? `campaign ${job.campaign_id}`
      : `scenario ${job.scenario_id}`;
  const range = describeRange(result.from_date, result.to_date);
  const lines = [
    `Export job \`${job._id}\`: **${job.status}** (${job.type}, ${target}, ${range}).`,
  ];
  if (result.earlier_download_error !== undefined) {
    lines.push(`${result.earlier_download_error} Retried now.`);
  }
  if (result.error !== undefined) lines.push(result.error);
  if (result.file_path !== undefined) {
    lines.push(`File: ${result.file_path} (${formatBytes(result.file_bytes ?? 0)}).`);
    lines.push(`Next: ${result.next_step}`);
  } else if (result.download_progress !== undefined) {
    const p = result.download_progress;
    lines.push(
      `The file is **downloading** in the background: ${formatByteProgress(p.bytes, p.total_bytes)}; it continues after this call. Next: ${result.next_step}`,
    );
  } else {
    lines.push(
      `${result.error === undefined ? "Not finished yet" : "The job is intact"}. Next: ${result.next_step}`,
    );
  }
  return lines.join("\n");
}
