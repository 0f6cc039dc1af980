import { ApiError } from "../api/errors.js";
import { type ExportJob, isTerminal } from "../api/schemas.js";
import { log } from "../log.js";
import { sleep } from "../sleep.js";
import { type ExportCall, type ExportRuntime, reportProgress } from "./export-call.js";
import { MAX_WAIT_SECONDS } from "./wait-seconds.js";

/**
 * Polling an export job: within a call's wait, never faster than the configured interval (also
 * across calls), with progress and cancellation.
 */

export interface WaitOutcome {
  job: ExportJob;
  /** True when wait_seconds ran out before the job finished. */
  timedOut: boolean;
  polls: number;
  /** The last temporary poll failure, when the wait ran out after one. */
  problem?: ApiError | undefined;
}

/** A failure that polling again later may cure (the client has already retried it). */
export function isTemporary(error: unknown): error is ApiError {
  return error instanceof ApiError && error.transient && error.kind !== "aborted";
}

/**
 * Polls until the job is completed or failed or `waitSeconds` would be exceeded. Polls keep the
 * configured interval, also across calls (a check_export right after start_export waits for the
 * remainder rather than polling early).
 */
export async function waitForJob(
  runtime: ExportRuntime,
  job: ExportJob,
  waitSeconds: number,
  call: ExportCall,
): Promise<WaitOutcome> {
  const api = await runtime.api();
  const intervalMs = runtime.config.pollIntervalSeconds * 1000;
  const deadline = Date.now() + Math.min(waitSeconds, MAX_WAIT_SECONDS) * 1000;
  // The wait's end cuts a poll still out with a signal of its own, so that end is told apart
  // from a poll that failed: the client's deadline lies past it and never fires first.
  const waitEnd = new AbortController();
  const timer = setTimeout(() => waitEnd.abort(), deadline - Date.now());
  const pollSignal = AbortSignal.any([call.signal, waitEnd.signal]);
  let current = job;
  let polls = 0;
  let problem: ApiError | undefined;
  try {
    while (!isTerminal(current.status)) {
      const last = runtime.lastPolledAt.get(current._id) ?? 0;
      const nextPollAt = Math.max(Date.now(), last + intervalMs);
      if (nextPollAt > deadline) return { job: current, timedOut: true, polls, problem };
      await sleep(nextPollAt - Date.now(), call.signal);
      runtime.lastPolledAt.set(current._id, Date.now());
      polls += 1;
      try {
        current = await api.getExportJob(current._id, {
          signal: pollSignal,
          deadline: deadline + WAIT_END_MARGIN_MS,
        });
        problem = undefined;
      } catch (error) {
        if (endedByWait(error, waitEnd.signal, call.signal)) {
          // Not finished yet, the ordinary answer. A failure the cut poll was about to retry
          // still counts, as does one of an earlier poll of this wait.
          const cause = error instanceof ApiError ? error.cause : undefined;
          return {
            job: current,
            timedOut: true,
            polls,
            problem: isTemporary(cause) ? cause : problem,
          };
        }
        // The job exists and its creation is spent: a passing failure must not lose it.
        if (!isTemporary(error) || call.signal.aborted) throw error;
        problem = error;
        log.info("export poll failed; will poll again", { job_id: current._id, kind: error.kind });
        continue;
      }
      await runtime.ledger.updateJob(current);
      const elapsed = Math.round((Date.now() - (deadline - waitSeconds * 1000)) / 1000);
      await reportProgress(call, `Export job ${current._id}: ${current.status} after ${elapsed}s`);
    }
    return { job: current, timedOut: false, polls };
  } finally {
    clearTimeout(timer);
  }
}

/** How far past the wait's end a poll's own deadline lies (see waitForJob). */
const WAIT_END_MARGIN_MS = 1_000;

/**
 * A poll cut by the end of the wait rather than failing: it was aborted, or timed out, once the
 * wait's own signal had fired, and the call itself was not cancelled.
 */
function endedByWait(error: unknown, waitEnd: AbortSignal, callSignal: AbortSignal): boolean {
  if (!waitEnd.aborted || callSignal.aborted || !(error instanceof ApiError)) return false;
  return error.kind === "aborted" || error.kind === "timeout";
}

/** Polls once now unless the interval since the last poll has not passed; then uses `fallback`. */
export async function pollOnce(
  runtime: ExportRuntime,
  jobId: string,
  call: ExportCall,
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
