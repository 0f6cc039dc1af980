import { ApiError, RateLimitedError } from "../api/errors.js";
import { EXPORT_CREATE_LIMIT, EXPORT_CREATE_WINDOW_SECONDS } from "../api/limits.js";
import type { CreateExportJobRequest, ExportJob } from "../api/schemas.js";
import type { BudgetStatus } from "../ledger/budget.js";
import type { GrantedReservation } from "../ledger/store.js";
import { log } from "../log.js";
import { windowText } from "./budget-and-range.js";
import { ExportBudgetError, ExportCallError, type ExportContext } from "./errors.js";
import type { ExportCall, ExportRuntime } from "./export-call.js";
import { createCertainlyRefused } from "./export-create-outcome.js";
import { lastReadyRoundDate } from "./ready-round.js";

/**
 * Creates a job within the local budget: one creation is reserved (checked and counted in one
 * locked step, so parallel calls cannot overdraw it), the request sent, and the slot given back
 * when the service certainly made no job. The new job is recorded in the ledger.
 */
export async function createJob(
  runtime: ExportRuntime,
  call: ExportCall,
  request: CreateExportJobRequest,
  key: string,
  context: ExportContext,
): Promise<ExportJob> {
  const reservation = await runtime.ledger.reserveCreate();
  if (!reservation.reserved) throw budgetRefusal(reservation.status, runtime.now());
  let sent = false;
  let job: ExportJob;
  try {
    const api = await runtime.api();
    sent = true;
    job = await api.createExportJob(request, { signal: call.signal });
  } catch (error) {
    // The 429's wait is stored before the slot is given back, so no call takes the slot
    // and runs into the same 429.
    if (error instanceof RateLimitedError) await runtime.ledger.recordRateLimit(error.retryAfterMs);
    if (!sent || createCertainlyRefused(error)) await refund(runtime, reservation);
    if (error instanceof ApiError) {
      const known =
        error.kind === "resource_not_ready"
          ? await readyRoundContext(runtime, call, request, context)
          : context;
      throw new ExportCallError(error, known);
    }
    throw error;
  }
  runtime.lastPolledAt.set(job._id, Date.now());
  await runtime.ledger.recordCreated(request, key, job, call.principal);
  return job;
}

/**
 * A campaign range with no aggregated round: the error names a range that holds one, so the
 * service is asked which round last finished (one metrics request, on this failure only).
 */
async function readyRoundContext(
  runtime: ExportRuntime,
  call: ExportCall,
  request: CreateExportJobRequest,
  context: ExportContext,
): Promise<ExportContext> {
  if (request.type !== "campaign_event_data") return context;
  const lastReadyRound = await lastReadyRoundDate(
    await runtime.api(),
    request.campaign_id,
    context.toDate,
    runtime.config.timeZone,
    runtime.now(),
    call.signal,
  );
  return { ...context, lastReadyRound };
}

/** Why the budget refused a creation, and when the next one is possible. */
function budgetRefusal(budget: BudgetStatus, now: number): ExportBudgetError {
  const nextSlotAt = budget.nextSlotAt ?? now;
  const at = new Date(nextSlotAt).toISOString();
  const seconds = Math.max(0, Math.ceil((nextSlotAt - now) / 1000));
  return new ExportBudgetError(
    budget.serverRateLimited
      ? `The service refused more export jobs for now (429). The next creation is possible at ${at} (in ${seconds}s). Meanwhile use check_export to list and reuse existing jobs.`
      : `Local export budget used up: ${budget.used} of ${budget.limit} job creations in the last ${windowText(budget.windowSeconds)} (the service allows ${EXPORT_CREATE_LIMIT} per ${EXPORT_CREATE_WINDOW_SECONDS / 60} minutes; only creations it accepted, or whose answer was lost, count). The next creation is possible at ${at} (in ${seconds}s). Meanwhile use check_export to list and reuse existing jobs.`,
    nextSlotAt,
    budget.serverRateLimited,
  );
}

/**
 * Gives a refused creation's slot back. A failure here only leaves the slot counted until it
 * leaves the window, so it is logged rather than hiding the service's answer.
 */
async function refund(runtime: ExportRuntime, reservation: GrantedReservation): Promise<void> {
  try {
    await runtime.ledger.refundCreate(reservation);
  } catch (error) {
    log.warn("export budget: a refused creation's slot could not be given back", {
      error: String(error),
    });
  }
}
