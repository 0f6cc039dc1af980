import { ApiError } from "../api/errors.js";
import { callHint, formatByteProgress } from "../format.js";
import { isRegularFile } from "../regular-file.js";
import { DownloadPendingError, ExportCallError, ExportNotReadyError } from "./errors.js";
import type { ExportCall, ExportRuntime } from "./export-call.js";
import { currentJob } from "./export-current-job.js";
import { awaitDownload } from "./export-download.js";
import { assertNotFailed } from "./export-result.js";

/** How long a tool that reads a job's file waits for its download before pointing to check_export. */
export const DOWNLOAD_WAIT_MS = 20_000;

/**
 * The local file of an export job, as the tools that read files (summarize_export,
 * query_export) find it: the ledger's file when it is still there, else the job is read from the
 * service and its file downloaded (within DOWNLOAD_WAIT_MS). A job without a file yet, or still
 * downloading, is an error that names the check_export call to make and `tool` to call again.
 */
export async function exportFilePath(
  runtime: ExportRuntime,
  jobId: string,
  call: ExportCall,
  tool: string,
): Promise<string> {
  const entry = await runtime.ledger.get(jobId);
  if (entry?.file_path !== undefined && (await isRegularFile(entry.file_path))) {
    return entry.file_path;
  }
  const { job, context } = await currentJob(runtime, jobId, entry, call);
  assertNotFailed(job);
  if (job.status !== "completed") {
    throw new ExportNotReadyError(
      jobId,
      `export job ${jobId} is ${job.status} on the service, so it has no file yet (the job is fine; generation takes tens of seconds to minutes). Next: ${callHint("check_export", { job_id: jobId, wait_seconds: 30 })}, then ${tool} again once it is completed.`,
    );
  }
  const download = await awaitDownload(runtime, job, call, entry, DOWNLOAD_WAIT_MS).catch(
    (error: unknown) => {
      // With the job attached, the text names the exact call that retries the download.
      throw error instanceof ApiError ? new ExportCallError(error, context) : error;
    },
  );
  if (download.state === "downloading") {
    throw new DownloadPendingError(
      jobId,
      `The file of export job ${jobId} is still downloading in the background (${formatByteProgress(download.bytes, download.totalBytes)}); the download continues. Wait for it with check_export {"job_id": "${jobId}", "wait_seconds": 30}, then call ${tool} again.`,
    );
  }
  return download.info.path;
}
