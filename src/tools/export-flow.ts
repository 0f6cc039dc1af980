import type { ResourceLink } from "@modelcontextprotocol/server";
import { DateTime } from "luxon";
import { ApiError } from "../api/errors.js";
import type { ExportJob } from "../api/schemas.js";
import { type LedgerEntry, safeJob } from "../ledger/ledger.js";
import { log } from "../log.js";
import { errorText } from "./error-result.js";
import {
  ExportCallError,
  type ExportContext,
  ExportJobFailedError,
  ToolCancelledError,
} from "./errors.js";
import { callHint, formatBytes } from "./format.js";
import { MAX_WAIT_SECONDS } from "./params.js";
import type { ToolCall, ToolRuntime } from "./tool.js";

/**
 * What start_export and check_export share: waiting on a job with progress and cancellation,
 * downloading a completed job's file, and describing the outcome.
 */

export const EXPORT_RESOURCE_SCHEME = "crm-export";

export function exportResourceUri(jobId: string): string {
  return `${EXPORT_RESOURCE_SCHEME}://${encodeURIComponent(jobId)}`;
}

export function isTerminal(status: string): boolean {
  return status === "completed" || status === "failed";
}

export interface WaitOutcome {
  job: ExportJob;
  /** True when wait_seconds ran out before the job finished. */
  timedOut: boolean;
  polls: number;
  /** The last temporary poll failure, when the wait ran out after one. */
  problem?: ApiError | undefined;
}

/** Progress values of one call, always increasing (MCP requires it) across wait and download. */
const progressSteps = new WeakMap<ToolCall, number>();

export function reportProgress(call: ToolCall, message: string): Promise<void> {
  const step = (progressSteps.get(call) ?? 0) + 1;
  progressSteps.set(call, step);
  return call.progress(step, message);
}

/** A failure that polling again later may cure (the client has already retried it). */
function isTemporary(error: unknown): error is ApiError {
  return error instanceof ApiError && error.transient && error.kind !== "aborted";
}

/**
 * Polls until the job is completed or failed or `waitSeconds` would be exceeded. Polls keep the
 * configured interval, also across calls (a check_export right after start_export waits for the
 * remainder rather than polling early).
 */
export async function waitForJob(
  runtime: ToolRuntime,
  job: ExportJob,
  waitSeconds: number,
  call: ToolCall,
): Promise<WaitOutcome> {
  const api = await runtime.api();
  const intervalMs = runtime.config.pollIntervalSeconds * 1000;
  const deadline = Date.now() + Math.min(waitSeconds, MAX_WAIT_SECONDS) * 1000;
  let current = job;
  let polls = 0;
  let problem: ApiError | undefined;
  while (!isTerminal(current.status)) {
    const last = runtime.lastPolledAt.get(current._id) ?? 0;
    const nextPollAt = Math.max(Date.now(), last + intervalMs);
    if (nextPollAt > deadline) return { job: current, timedOut: true, polls, problem };
    await sleep(nextPollAt - Date.now(), call.signal);
    runtime.lastPolledAt.set(current._id, Date.now());
    polls += 1;
    try {
      current = await api.getExportJob(current._id, { signal: call.signal, deadline });
      problem = undefined;
    } catch (error) {
      // The job exists and its creation is spent: a passing failure must not lose it.
      if (!isTemporary(error) || call.signal.aborted) throw error;
      // Our own deadline cutting a retry short says less than the failure before it.
      problem = error.kind === "timeout" && problem !== undefined ? problem : error;
      log.info("export poll failed; will poll again", { job_id: current._id, kind: error.kind });
      continue;
    }
    await runtime.ledger.updateJob(current);
    const elapsed = Math.round((Date.now() - (deadline - waitSeconds * 1000)) / 1000);
    await reportProgress(call, `Export job ${current._id}: ${current.status} after ${elapsed}s`);
  }
  return { job: current, timedOut: false, polls };
}

/** Polls once now unless the interval since the last poll has not passed; then uses `fallback`. */
export async function pollOnce(
  runtime: ToolRuntime,
  jobId: string,
  call: ToolCall,
): Promise<ExportJob | undefined> {
  const last = runtime.lastPolledAt.get(jobId);
  if (last !== undefined && Date.now() - last < runtime.config.pollIntervalSeconds * 1000) {
    return undefined;
  }
  const api = await runtime.api();
  runtime.lastPolledAt.set(jobId, Date.now());
  const job = await api.getExportJob(jobId, { signal: call.signal });
  await runtime.ledger.updateJob(job);
  return job;
}

export interface DownloadInfo {
  path: string;
  bytes: number;
  link: ResourceLink;
}

/**
 * The file of a completed job: the one already downloaded if it is still there, otherwise a
 * fresh download (re-reading the job when the stored URL lacks its signature).
 */
export async function ensureDownloaded(
  runtime: ToolRuntime,
  job: ExportJob,
  call: ToolCall,
  entry: LedgerEntry | undefined,
): Promise<DownloadInfo> {
  if (entry?.file_path !== undefined && entry.file_bytes !== undefined) {
    if (await exists(entry.file_path)) {
      return describeDownload(job, entry.file_path, entry.file_bytes);
    }
  }
  const api = await runtime.api();
  let source = job;
  // The ledger keeps no signed URL; a job read from it needs a fresh read for a usable URL.
  if (source.download_url === undefined || source.download_url.includes("[REDACTED]")) {
    source = await api.getExportJob(job._id, { signal: call.signal });
    runtime.lastPolledAt.set(job._id, Date.now());
    await runtime.ledger.updateJob(source);
  }
  // The client refuses an expired URL (DownloadRefusedError "expired") by its own clock.
  await reportProgress(call, `Downloading the file of export job ${job._id}`);
  const file = await api.downloadExport(source, { signal: call.signal });
  await runtime.ledger.recordDownload(job._id, file.path, file.bytes);
  return describeDownload(job, file.path, file.bytes);
}

function describeDownload(job: ExportJob, path: string, bytes: number): DownloadInfo {
  const ext = job.file_ext ?? (job.type === "campaign_event_data" ? "csv" : "xlsx");
  return {
    path,
    bytes,
    link: {
      type: "resource_link",
      uri: exportResourceUri(job._id),
      name: `${job.file_name ?? job._id}.${ext}`,
      mimeType: mimeTypeFor(ext),
      description: `${job.type} export (${formatBytes(bytes)})`,
    },
  };
}

export function mimeTypeFor(ext: string): string {
  return ext === "csv"
    ? "text/csv"
    : ext === "xlsx"
      ? "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
      : "application/octet-stream";
}

/** Throws the error spec 3.1 calls for when a job failed. */
export function assertNotFailed(job: ExportJob): void {
  if (job.status !== "failed") return;
  const id = job.type === "campaign_event_data" ? job.campaign_id : job.scenario_id;
  throw new ExportJobFailedError(
    job._id,
    `Export job ${job._id} (${job.type}${id === undefined ? "" : ` for ${id}`}) failed on the service. A failed job cannot be retried; create a new one with start_export and "force": true.`,
  );
}

/** The shared structured fields of a job result. */
export interface JobResult {
  job: ExportJob;
  done: boolean;
  /** The exported range as inclusive calendar dates in the app's zone (absent: no limit). */
  from_date?: string;
  to_date?: string;
  file_path?: string;
  file_bytes?: number;
  resource_uri?: string;
  /** A temporary failure after the job was created; the job is intact, next_step continues. */
  error?: string;
  next_step: string;
}

export function jobResult(
  job: ExportJob,
  download: DownloadInfo | undefined,
  zone: string,
  problem?: unknown,
): JobResult {
  const result: JobResult = {
    job: safeJob(job),
    done: isTerminal(job.status) && download !== undefined,
    next_step:
      download !== undefined
        ? callHint("summarize_export", { job_id: job._id })
        : callHint("check_export", { job_id: job._id, wait_seconds: 30 }),
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
  if (problem !== undefined) result.error = errorText(problem, "the export");
  return result;
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
  const range =
    result.from_date === undefined && result.to_date === undefined
      ? "all rounds"
      : `${result.from_date ?? "…"} to ${result.to_date ?? "…"} inclusive`;
  const lines = [
    `Export job \`${job._id}\`: **${job.status}** (${job.type}, ${target}, ${range}).`,
  ];
  if (result.error !== undefined) lines.push(result.error);
  if (result.file_path !== undefined) {
    lines.push(`File: ${result.file_path} (${formatBytes(result.file_bytes ?? 0)}).`);
    lines.push(`Next: ${result.next_step}`);
  } else {
    lines.push(
      `${result.error === undefined ? "Not finished yet" : "The job is intact"}. Next: ${result.next_step}`,
    );
  }
  return lines.join("\n");
}

export interface FollowOutcome {
  job: ExportJob;
  timedOut: boolean;
  download?: DownloadInfo | undefined;
  /** A temporary failure met after the job existed; the result carries it with next_step. */
  problem?: ExportCallError | undefined;
}

/**
 * Waits for a job that exists and downloads its file. A temporary failure (poll 500s, a cut
 * download) becomes part of a normal result, because the job and its spent creation must stay
 * in the model's hands; a lasting one is thrown with the job's ID attached.
 */
export async function followJob(
  runtime: ToolRuntime,
  job: ExportJob,
  waitSeconds: number,
  call: ToolCall,
  context: ExportContext,
): Promise<FollowOutcome> {
  let current = job;
  let timedOut = false;
  const withJob = { ...context, jobId: job._id };
  try {
    if (waitSeconds > 0 && !isTerminal(current.status)) {
      const outcome = await waitForJob(runtime, current, waitSeconds, call);
      current = outcome.job;
      timedOut = outcome.timedOut;
      if (outcome.problem !== undefined)
        return {
          job: current,
          timedOut,
          problem: new ExportCallError(outcome.problem, withJob),
        };
    }
    assertNotFailed(current);
    if (current.status !== "completed") return { job: current, timedOut };
    const download = await ensureDownloaded(
      runtime,
      current,
      call,
      await runtime.ledger.get(current._id),
    );
    return { job: current, timedOut, download };
  } catch (error) {
    if (isTemporary(error) && !call.signal.aborted) {
      return { job: current, timedOut, problem: new ExportCallError(error, withJob) };
    }
    if (error instanceof ApiError && error.kind !== "aborted") {
      throw new ExportCallError(error, withJob);
    }
    throw error;
  }
}

async function exists(path: string): Promise<boolean> {
  const { stat } = await import("node:fs/promises");
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new ToolCancelledError("Cancelled while waiting for the export job."));
      return;
    }
    const timer = setTimeout(
      () => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    const onAbort = () => {
      clearTimeout(timer);
      reject(new ToolCancelledError("Cancelled while waiting for the export job."));
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
