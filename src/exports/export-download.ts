import type { ResourceLink } from "@modelcontextprotocol/server";
import { DownloadRefusedError } from "../api/errors.js";
import type { ExportJob } from "../api/schemas.js";
import type { DownloadedFile } from "../api/types.js";
import { formatByteProgress, formatBytes } from "../format.js";
import type { LedgerEntry } from "../ledger/store.js";
import { log } from "../log.js";
import { isRegularFile } from "../regular-file.js";
import { sleep } from "../sleep.js";
import { LEASE_HOLDER, leaseHolderGone } from "./download-lease.js";
import { type ExportCall, type ExportRuntime, reportProgress } from "./export-call.js";
import { exportResourceUri, mimeTypeFor } from "./file-link.js";

/**
 * A completed job's file: awaited by a call within its budget, downloaded in the background
 * (owned by the runtime's download manager, not by the call), once across processes that share
 * the ledger (download leases).
 */

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
  runtime: ExportRuntime,
  job: ExportJob,
  call: ExportCall,
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

/** A lease outlives a holder that died on another machine by at most this; a download renews it. */
const DOWNLOAD_LEASE_MS = 60_000;
/** How often a process waiting on another's download looks for its file. */
const LEASE_WAIT_MS = 1000;

/**
 * Runs detached from any tool call: only server close (`signal`) stops it. Processes sharing the
 * ledger download a file once: the one holding the job's lease downloads, the others wait for its
 * file to appear in the ledger (or for the lease to end, when its holder failed or died).
 */
async function backgroundDownload(
  runtime: ExportRuntime,
  job: ExportJob,
  signal: AbortSignal,
  onProgress: (bytes: number) => void,
): Promise<DownloadedFile> {
  for (;;) {
    const done = await downloadedElsewhere(runtime, job._id);
    if (done !== undefined) return done;
    if (
      await runtime.ledger.acquireDownloadLease(
        job._id,
        LEASE_HOLDER,
        DOWNLOAD_LEASE_MS,
        leaseHolderGone,
      )
    ) {
      break;
    }
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
  runtime: ExportRuntime,
  jobId: string,
): Promise<DownloadedFile | undefined> {
  const entry = await runtime.ledger.get(jobId);
  if (entry?.file_path === undefined || entry.file_bytes === undefined) return undefined;
  if (!(await isRegularFile(entry.file_path))) return undefined;
  return { path: entry.file_path, bytes: entry.file_bytes };
}

async function leasedDownload(
  runtime: ExportRuntime,
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
  // Only the process holding the download's lease gets here: the file is added once.
  runtime.keepInHistory(job._id);
  // A new file may take the folder over CRM_RETENTION_MB (this one is spared as just downloaded).
  void runtime.sweepFiles();
  return file;
}

/** Byte counts as progress values (so they increase with the file), the message in MB. */
function reportBytes(
  call: ExportCall,
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
