import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { ResourceLink } from "@modelcontextprotocol/server";
import { DateTime } from "luxon";
import { ApiError, DownloadRefusedError, NotFoundError } from "../api/errors.js";
import { type ExportJob, isTerminal, targetIdOf } from "../api/schemas.js";
import type { DownloadedFile } from "../api/types.js";
import {
  callHint,
  describeCalls,
  formatByteProgress,
  formatBytes,
  type NextCall,
  nextCall,
} from "../format.js";
import { safeJob } from "../ledger/ledger.js";
import { requestKeyDates } from "../ledger/request-key.js";
import type { LedgerEntry } from "../ledger/store.js";
import { log } from "../log.js";
import { isRegularFile } from "../regular-file.js";
import { exportResourceUri, mimeTypeFor } from "../resources/export-files.js";
import { errorText } from "./error-text.js";
import { describeRange } from "./export-common.js";
import { MAX_WAIT_SECONDS } from "./params.js";
import type { ToolCall, ToolRuntime } from "./tool.js";
import {
  ExportCallError,
  type ExportContext,
  ExportJobFailedError,
  ExportJobLostError,
  ToolCancelledError,
} from "./tool-errors.js";

/**
 * What start_export and check_export share: waiting on a job with progress and cancellation,
 * downloading a completed job's file, and describing the outcome.
 */

export interface WaitOutcome {
  job: ExportJob;
  /** True when wait_seconds ran out before the job finished. */
  timedOut: boolean;
  polls: number;
  /** The last temporary poll failure, when the wait ran out after one. */
  problem?: ApiError | undefined;
}

/** One progress step of a call (the call keeps its values increasing across wait and download). */
export function reportProgress(call: ToolCall, message: string): Promise<void> {
  return call.progress(undefined, message);
}

/**
 * A read of a job that exists (it was created or read a moment ago) answered with something we
 * cannot use: a 400, a cut-off or malformed body. The job and its spent creation stay in the
 * result with the check_export call; only "not found" says the job is gone.
 */
function isFailedRead(error: unknown): error is ApiError {
  return (
    error instanceof ApiError &&
    error.operation === "get_export_job" &&
    error.kind !== "aborted" &&
    error.kind !== "not_found"
  );
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

/** What the export tools know of a job when an API call about it fails (for the error text). */
export function jobContext(jobId: string, entry: LedgerEntry | undefined): ExportContext {
  return {
    jobId,
    type: entry?.request.type,
    targetId: entry === undefined ? undefined : targetIdOf(entry.request),
  };
}

export interface CurrentJob {
  job: ExportJob;
  context: ExportContext;
  /** A passing poll failure survived by using the ledger's copy of the job. */
  pollProblem?: ExportCallError | undefined;
}

/**
 * The job as it stands: from a poll now, else (polled too recently, or a passing poll failure
 * for a job the ledger knows) the ledger's copy, else a direct read. API failures carry the job's
 * ID, type and target; "not found" marks the ledger's entry lost (the service no longer has it).
 */
export async function currentJob(
  runtime: ToolRuntime,
  jobId: string,
  entry: LedgerEntry | undefined,
  call: ToolCall,
): Promise<CurrentJob> {
  const context = jobContext(jobId, entry);
  // Completed with its file on disk: final, answered from the ledger without asking the service
  // (which may no longer know the job, e.g. after a restart).
  if (
    entry?.status === "completed" &&
    entry.file_path !== undefined &&
    (await isRegularFile(entry.file_path))
  ) {
    return { job: entry.job, context };
  }
  // Once lost, always lost: a throttled poll must not fall back to the ledger's stale copy.
  if (entry?.lost_at !== undefined) throw lostJobError(entry);
  const fail = async (error: unknown): Promise<never> => {
    if (error instanceof NotFoundError) {
      await runtime.ledger.markLost(jobId);
      if (entry !== undefined) throw lostJobError(entry);
    }
    if (error instanceof ApiError) throw new ExportCallError(error, context);
    throw error;
  };
  let job: ExportJob | undefined;
  let pollProblem: ExportCallError | undefined;
  try {
    job = await pollOnce(runtime, jobId, call);
  } catch (error) {
    // A passing failure with the job known locally: carry on from the ledger's copy.
    if (!(error instanceof ApiError && error.transient && entry !== undefined)) return fail(error);
    pollProblem = new ExportCallError(error, context);
  }
  job ??= entry?.job;
  if (job === undefined) {
    try {
      job = await (await runtime.api()).getExportJob(jobId, { signal: call.signal });
    } catch (error) {
      return fail(error);
    }
  }
  return { job, context, ...(pollProblem === undefined ? {} : { pollProblem }) };
}

/** The inclusive dates (app zone) a ledger entry was requested for, from its request key. */
export function entryDates(entry: LedgerEntry): { fromDate?: string; toDate?: string } {
  return requestKeyDates(entry.request_key);
}

/** The start_export call that creates a ledger entry's job again (dates from its request key). */
export function recreateCall(entry: LedgerEntry): string {
  const { fromDate, toDate } = entryDates(entry);
  const request = entry.request;
  return callHint("start_export", {
    type: request.type,
    ...(request.type === "campaign_event_data"
      ? { campaign_id: request.campaign_id }
      : { scenario_id: request.scenario_id }),
    ...(fromDate ? { from: fromDate } : {}),
    ...(toDate ? { to: toDate } : {}),
    force: true,
  });
}

function lostJobError(entry: LedgerEntry): ExportJobLostError {
  return new ExportJobLostError(
    entry.job_id,
    `export job ${entry.job_id} was not found on the service: the service no longer has it (e.g. it was restarted), so the local ledger lists it as lost. Create it again with ${recreateCall(entry)}.`,
  );
}

export interface DownloadInfo {
  path: string;
  bytes: number;
  link: ResourceLink;
}

/** How far a job's file has come when a call's wait for it ended. */
export type DownloadOutcome =
  | { state: "done"; info: DownloadInfo; earlier?: unknown }
  | { state: "downloading"; bytes: number; totalBytes?: number | undefined; earlier?: unknown };

/** Between progress notifications while a download is awaited. */
const DOWNLOAD_PROGRESS_MS = 500;

/**
 * The file of a completed job, awaited for at most `budgetMs`: the one already downloaded if it
 * is still there, else the job's background download (joined if running, started otherwise).
 * The download outlives this call (see download-manager.ts); when the budget runs out the result
 * says how far it got. A download that failed while nobody waited is retried here and returned
 * as `earlier`, unless the URL expired, which only a new job cures.
 */
export async function awaitDownload(
  runtime: ToolRuntime,
  job: ExportJob,
  call: ToolCall,
  entry: LedgerEntry | undefined,
  budgetMs: number,
): Promise<DownloadOutcome> {
  if (entry?.file_path !== undefined && entry.file_bytes !== undefined) {
    if (await isRegularFile(entry.file_path)) {
      return { state: "done", info: describeDownload(job, entry.file_path, entry.file_bytes) };
    }
  }
  const downloads = runtime.downloads;
  let task = downloads.get(job._id);
  let earlier: unknown;
  if (task === undefined || task.state !== "running") {
    earlier = downloads.takeFailure(job._id);
    if (earlier instanceof DownloadRefusedError && earlier.reason === "expired") throw earlier;
    await reportProgress(call, `Downloading the file of export job ${job._id}`);
    task = downloads.start(job._id, job.file_size, (signal, onProgress) =>
      backgroundDownload(runtime, job, signal, onProgress),
    );
  }
  const settled = task.done.then(
    (file) => ({ file }),
    (error: unknown) => ({ error }),
  );
  const deadline = Date.now() + Math.max(0, budgetMs);
  let reported = -1;
  for (;;) {
    const left = deadline - Date.now();
    const outcome = await Promise.race([
      settled,
      left <= 0
        ? Promise.resolve(undefined)
        : sleep(Math.min(left, DOWNLOAD_PROGRESS_MS), call.signal),
    ]);
    if (outcome !== undefined) {
      if ("error" in outcome) {
        // This call reports it; the next one must not report it again.
        downloads.takeFailure(job._id);
        throw outcome.error;
      }
      return {
        state: "done",
        info: describeDownload(job, outcome.file.path, outcome.file.bytes),
        ...(earlier === undefined ? {} : { earlier }),
      };
    }
    if (task.bytes > reported) {
      reported = task.bytes;
      await reportBytes(call, task.bytes, task.totalBytes, job._id);
    }
    if (Date.now() >= deadline) {
      return {
        state: "downloading",
        bytes: task.bytes,
        totalBytes: task.totalBytes,
        ...(earlier === undefined ? {} : { earlier }),
      };
    }
  }
}

/** Who holds download leases for this process (see LedgerStore.acquireDownloadLease). */
const LEASE_HOLDER = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
/** A lease outlives a killed holder by at most this; a running download renews it. */
const DOWNLOAD_LEASE_MS = 60_000;
/** How often a process waiting on another's download looks for its file. */
const LEASE_WAIT_MS = 1000;

/**
 * Runs detached from any tool call: only server close (`signal`) stops it. Processes sharing the
 * ledger download a file once: the one holding the job's lease downloads, the others wait for its
 * file to appear in the ledger (or for the lease to end, when its holder failed or died).
 */
async function backgroundDownload(
  runtime: ToolRuntime,
  job: ExportJob,
  signal: AbortSignal,
  onProgress: (bytes: number) => void,
): Promise<DownloadedFile> {
  for (;;) {
    const done = await downloadedElsewhere(runtime, job._id);
    if (done !== undefined) return done;
    if (await runtime.ledger.acquireDownloadLease(job._id, LEASE_HOLDER, DOWNLOAD_LEASE_MS)) break;
    await sleep(LEASE_WAIT_MS, signal);
  }
  const renew = setInterval(() => {
    runtime.ledger
      .acquireDownloadLease(job._id, LEASE_HOLDER, DOWNLOAD_LEASE_MS)
      .catch((error: unknown) =>
        log.warn("download lease renewal failed", { error: String(error) }),
      );
  }, DOWNLOAD_LEASE_MS / 3);
  renew.unref();
  try {
    // Another process may have finished between our last look and the lease.
    return (
      (await downloadedElsewhere(runtime, job._id)) ??
      (await leasedDownload(runtime, job, signal, onProgress))
    );
  } finally {
    clearInterval(renew);
    await runtime.ledger
      .releaseDownloadLease(job._id, LEASE_HOLDER)
      .catch((error: unknown) =>
        log.warn("download lease release failed", { error: String(error) }),
      );
  }
}

/** The job's file when the ledger says it was downloaded and it is still on disk. */
async function downloadedElsewhere(
  runtime: ToolRuntime,
  jobId: string,
): Promise<DownloadedFile | undefined> {
  const entry = await runtime.ledger.get(jobId);
  if (entry?.file_path === undefined || entry.file_bytes === undefined) return undefined;
  if (!(await isRegularFile(entry.file_path))) return undefined;
  return { path: entry.file_path, bytes: entry.file_bytes };
}

async function leasedDownload(
  runtime: ToolRuntime,
  job: ExportJob,
  signal: AbortSignal,
  onProgress: (bytes: number) => void,
): Promise<DownloadedFile> {
  const api = await runtime.api();
  let source = job;
  // The ledger keeps no signed URL; a job read from it needs a fresh read for a usable URL.
  if (source.download_url === undefined || source.download_url.includes("[REDACTED]")) {
    source = await api.getExportJob(job._id, { signal });
    runtime.lastPolledAt.set(job._id, Date.now());
    await runtime.ledger.updateJob(source);
  }
  // The client refuses an expired URL (DownloadRefusedError "expired") by its own clock.
  const file = await api.downloadExport(source, { signal, onProgress });
  await runtime.ledger.recordDownload(job._id, file.path, file.bytes);
  // A new file may take the folder over CRM_RETENTION_MB (this one is spared as just downloaded).
  void runtime.sweepFiles();
  return file;
}

/** Byte counts as progress values (so they increase with the file), the message in MB. */
function reportBytes(
  call: ToolCall,
  bytes: number,
  total: number | undefined,
  jobId: string,
): Promise<void> {
  return call.progress(
    bytes,
    `Downloading the file of export job ${jobId}: ${formatByteProgress(bytes, total)}`,
    total,
  );
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

export function jobResult(
  job: ExportJob,
  download: DownloadInfo | undefined,
  zone: string,
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

export interface FollowOutcome {
  job: ExportJob;
  timedOut: boolean;
  download?: DownloadInfo | undefined;
  /** Completed, but the wait ran out while the file was still downloading in the background. */
  downloading?: { bytes: number; totalBytes?: number | undefined } | undefined;
  /** A background download that had failed after an earlier call returned; retried here. */
  earlier?: ExportCallError | undefined;
  /** A temporary failure met after the job existed; the result carries it with next_step. */
  problem?: ExportCallError | undefined;
}

/** What jobResult needs of a follow's download state (also an earlier failure it retried). */
export function pendingDownload(
  outcome: FollowOutcome,
): { bytes: number; totalBytes?: number | undefined; earlier?: unknown } | undefined {
  if (outcome.downloading !== undefined)
    return { ...outcome.downloading, earlier: outcome.earlier };
  if (outcome.earlier !== undefined) return { bytes: 0, earlier: outcome.earlier };
  return undefined;
}

/**
 * Waits for a job that exists and for its file, both within `waitSeconds` in all. A temporary
 * failure (poll 500s, a cut download) becomes part of a normal result, because the job and its
 * spent creation must stay in the model's hands; a lasting one is thrown with the job's ID attached.
 */
export async function followJob(
  runtime: ToolRuntime,
  job: ExportJob,
  waitSeconds: number,
  call: ToolCall,
  context: ExportContext,
): Promise<FollowOutcome> {
  const deadline = Date.now() + Math.min(waitSeconds, MAX_WAIT_SECONDS) * 1000;
  let current = job;
  let timedOut = false;
  const withJob = { ...context, jobId: job._id };
  const asCallError = (error: unknown) =>
    error instanceof ApiError ? new ExportCallError(error, withJob) : undefined;
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
    const download = await awaitDownload(
      runtime,
      current,
      call,
      await runtime.ledger.get(current._id),
      deadline - Date.now(),
    );
    const earlier = asCallError(download.earlier);
    if (download.state === "done")
      return { job: current, timedOut, download: download.info, earlier };
    return {
      job: current,
      timedOut: true,
      downloading: { bytes: download.bytes, totalBytes: download.totalBytes },
      earlier,
    };
  } catch (error) {
    if ((isTemporary(error) || isFailedRead(error)) && !call.signal.aborted) {
      return { job: current, timedOut, problem: new ExportCallError(error, withJob) };
    }
    if (error instanceof ApiError && error.kind !== "aborted") {
      throw new ExportCallError(error, withJob);
    }
    throw error;
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
