import type { ResourceLink } from "@modelcontextprotocol/server";
import { ApiError } from "../api/errors.js";
import { type ExportJob, isTerminal } from "../api/schemas.js";
import { ExportCallError, type ExportContext } from "./errors.js";
import type { ExportCall, ExportRuntime } from "./export-call.js";
import { awaitDownload, type DownloadInfo } from "./export-download.js";
import { isTemporary, waitForJob } from "./export-polling.js";
import {
  assertNotFailed,
  type ErrorText,
  followedSummary,
  type JobResult,
  jobResult,
} from "./export-result.js";
import { MAX_WAIT_SECONDS } from "./wait-seconds.js";

/**
 * Following a job that exists, as start_export and check_export do: waiting on it
 * (export-polling.ts), then on its file (export-download.ts), within the call's wait_seconds;
 * export-result.ts turns the outcome into the result and its summary.
 */

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
function pendingDownload(
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
  runtime: ExportRuntime,
  job: ExportJob,
  waitSeconds: number,
  call: ExportCall,
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

/** A followed job as the export tools answer it. */
export interface FollowedJob {
  result: JobResult;
  /** The one sentence that sums it up (export-result.ts's followedSummary). */
  summary: string;
  /** The downloaded file's resource link, once there is one. */
  links: ResourceLink[];
}

/**
 * Follows a job (followJob) and builds the result start_export and check_export answer with.
 * `pollProblem`: a passing failure of a read before the follow, reported while the job has not
 * completed; `reused`: the job is an identical earlier one.
 */
export async function followToResult(
  runtime: ExportRuntime,
  job: ExportJob,
  call: ExportCall,
  options: {
    waitSeconds: number;
    context: ExportContext;
    errorText: ErrorText;
    reused?: boolean;
    pollProblem?: ExportCallError | undefined;
  },
): Promise<FollowedJob> {
  const outcome = await followJob(runtime, job, options.waitSeconds, call, options.context);
  const problem =
    outcome.problem ?? (outcome.job.status === "completed" ? undefined : options.pollProblem);
  const result = jobResult(
    outcome.job,
    outcome.download,
    runtime.config.timeZone,
    options.errorText,
    problem,
    pendingDownload(outcome),
  );
  return {
    result,
    summary: followedSummary(outcome, problem, options),
    links: outcome.download === undefined ? [] : [outcome.download.link],
  };
}
