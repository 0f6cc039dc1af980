import { ApiError, NotFoundError } from "../api/errors.js";
import { type CreateExportJobRequest, type ExportJob, isRunning } from "../api/schemas.js";
import type { LedgerEntry } from "../ledger/store.js";
import { createJob } from "./create-job.js";
import { type CreateClaim, claimCreation } from "./cross-process-claim.js";
import type { ExportContext } from "./errors.js";
import type { ExportCall, ExportRuntime } from "./export-call.js";
import { pollOnce } from "./export-polling.js";
import { lockRequestKey } from "./request-key-lock.js";

/** An export as start_export asks for it. */
export interface WantedExport {
  request: CreateExportJobRequest;
  /** Its request key (ledger/request-key.ts): identical requests share it. */
  key: string;
  /** The end of its range (ledger's ReuseOptions): when an earlier file may still be reused. */
  rangeEndsAt?: number | undefined;
  /** What the error texts of a failed creation name. */
  context: ExportContext;
}

export interface FoundJob {
  job: ExportJob;
  /** When the reused job was created (its data is as of then); absent for a new job. */
  reusedCreatedAt?: string | undefined;
  /** Why an earlier job answers this call; empty for a new job. */
  note: string;
}

/**
 * The job for an export: an identical earlier one the ledger can answer with (completed with a
 * file or URL still valid, or still running), else a new one. `force` always creates.
 */
export async function findOrCreateJob(
  runtime: ExportRuntime,
  call: ExportCall,
  wanted: WantedExport,
  force: boolean,
): Promise<FoundJob> {
  const { request, key, rangeEndsAt, context } = wanted;
  let found: FoundJob | undefined;
  // A running job can finish between the two looks of lookUp (another call polling it records
  // it completed): then it is neither running nor seen finished, so look for a finished one again.
  const lookUpTwice = async (): Promise<void> => {
    found = await lookUp(runtime, call, key, rangeEndsAt);
    found ??= await lookUp(runtime, call, key, rangeEndsAt);
  };
  const releaseKey = await lockRequestKey(runtime, key);
  let claim: CreateClaim | undefined;
  try {
    if (!force) await lookUpTwice();
    // Another server process on the same ledger may be creating this job right now: the claim
    // lets one create it while the others wait, then find and join it.
    if (found === undefined && !force) {
      claim = await claimCreation(runtime, key, call);
      if (claim.waited) await lookUpTwice();
    }
    found ??= { job: await createJob(runtime, call, request, key, context), note: "" };
  } finally {
    await claim?.release();
    releaseKey();
  }
  return found;
}

/** An identical earlier job: completed with a usable file or URL, else still running. */
async function lookUp(
  runtime: ExportRuntime,
  call: ExportCall,
  key: string,
  rangeEndsAt: number | undefined,
): Promise<FoundJob | undefined> {
  const reusable = await runtime.ledger.findReusable(key, { rangeEndsAt });
  if (reusable !== undefined) {
    const createdAt = reusable.job.created_at ?? reusable.requested_at;
    return {
      job: reusable.job,
      reusedCreatedAt: createdAt,
      note: `Answered from the local ledger: identical job ${reusable.job_id} (created ${createdAt}) is completed and its file or URL is still valid. Pass "force": true for a new job with fresh data.`,
    };
  }
  const pending = await runningJob(runtime, key, call);
  if (pending === undefined) return undefined;
  const createdAt = pending.job.created_at ?? pending.requested_at;
  return {
    job: pending.job,
    reusedCreatedAt: createdAt,
    note: `An identical job ${pending.job_id} (created ${createdAt}) is still running; waiting on it instead of creating another. Pass "force": true for a new job.`,
  };
}

/**
 * The ledger's unfinished job for the same request, if the service still has it. The service is
 * asked first: after a restart (or a lost sandbox) the entry may be stale, and reusing it would
 * answer "not found" or "still running" for a job that no longer exists.
 */
async function runningJob(
  runtime: ExportRuntime,
  key: string,
  call: ExportCall,
): Promise<LedgerEntry | undefined> {
  const pending = (await runtime.ledger.list(50)).find(
    (e) => e.request_key === key && e.lost_at === undefined && isRunning(e.status),
  );
  if (pending === undefined) return undefined;
  try {
    const fresh = await pollOnce(runtime, pending.job_id, call);
    if (fresh === undefined) return pending;
    // Finished meanwhile: a completed job is used as is, a failed one needs a new job.
    if (fresh.status === "failed") return undefined;
    return { ...pending, job: fresh, status: fresh.status };
  } catch (error) {
    if (error instanceof NotFoundError) {
      await runtime.ledger.markLost(pending.job_id);
      return undefined;
    }
    // A temporary failure: the job most likely still runs; the wait polls it again.
    if (error instanceof ApiError && error.transient) return pending;
    throw error;
  }
}
