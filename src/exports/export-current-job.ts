import { ApiError, NotFoundError } from "../api/errors.js";
import { type ExportJob, isTerminal, targetIdOf } from "../api/schemas.js";
import { callHint } from "../format.js";
import { requestKeyDates } from "../ledger/request-key.js";
import type { LedgerEntry } from "../ledger/store.js";
import { isRegularFile } from "../regular-file.js";
import { ExportCallError, type ExportContext, ExportJobLostError } from "./errors.js";
import type { ExportCall, ExportRuntime } from "./export-call.js";
import { pollOnce } from "./export-polling.js";

/**
 * A job asked about by ID: as it stands now (service or ledger), what is known of it for error
 * texts, and how to create it again once the service has lost it.
 */

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
  runtime: ExportRuntime,
  jobId: string,
  entry: LedgerEntry | undefined,
  call: ExportCall,
  options: { waitSeconds?: number } = {},
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
  // A running job the ledger knows, asked about by a call that will wait: the wait polls it,
  // within its end. A poll here would have no end but the client's, and a service slow to
  // answer would hold the call past its wait_seconds.
  if (entry !== undefined && !isTerminal(entry.status) && (options.waitSeconds ?? 0) > 0) {
    return { job: entry.job, context };
  }
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
