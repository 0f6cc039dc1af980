/**
 * The local mirror of the service's export-creation limit (EXPORT_CREATE_LIMIT calls per
 * EXPORT_CREATE_WINDOW_SECONDS per application). Only accepted creations count: a create is counted before it is sent (so parallel
 * calls cannot overdraw), and given back when the service refused it with a definitive answer
 * (any 4xx, 429 included: exports/export-create-outcome.ts). One whose
 * fate is unknown (a timeout, a connection cut after sending, a 5xx) stays counted, because the
 * service may have made the job. Spec 8 counts the limit in calls without saying whether
 * refused calls count; if the service counts them, its 429 and Retry-After hold creations back
 * (recordRateLimit), so guessing wrong costs one refused call, never a lock-out.
 */
export interface ExportBudget {
  count: number;
  windowSeconds: number;
}

export interface BudgetStatus {
  /** Creations counted inside the current window (accepted, or of unknown fate). */
  used: number;
  limit: number;
  windowSeconds: number;
  /** Whether one more creation is allowed now. */
  allowed: boolean;
  /** Epoch ms when the next creation becomes possible; `undefined` when allowed now. */
  nextSlotAt: number | undefined;
  /** True when a server 429 (not the local count) is what blocks. */
  serverRateLimited: boolean;
}

export function budgetStatus(
  createCalls: readonly number[],
  rateLimitedUntil: number | undefined,
  budget: ExportBudget,
  now: number,
): BudgetStatus {
  const windowMs = budget.windowSeconds * 1000;
  // A call stamped after `now` came from a clock that ran ahead (a sandbox restarted at the same
  // pinned time): it is in the window until its stamp plus the window, like any other, so it
  // counts now too (every reader and the reservation agree on one count and one next slot).
  const recent = createCalls.filter((t) => t > now - windowMs).sort((a, b) => a - b);
  let nextSlotAt: number | undefined;
  if (recent.length >= budget.count) {
    // The oldest call that must leave the window for a slot to open.
    const blocking = recent[recent.length - budget.count];
    nextSlotAt = blocking === undefined ? undefined : blocking + windowMs;
  }
  const serverBlocked = rateLimitedUntil !== undefined && rateLimitedUntil > now;
  if (serverBlocked && (nextSlotAt === undefined || rateLimitedUntil > nextSlotAt)) {
    nextSlotAt = rateLimitedUntil;
  }
  return {
    used: recent.length,
    limit: budget.count,
    windowSeconds: budget.windowSeconds,
    allowed: nextSlotAt === undefined,
    nextSlotAt,
    serverRateLimited: serverBlocked && nextSlotAt === rateLimitedUntil,
  };
}
