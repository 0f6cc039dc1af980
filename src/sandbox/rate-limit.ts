/**
 * Sliding-window limiter for export-job creation (spec 8: CREATE_LIMIT calls per
 * CREATE_WINDOW_SECONDS per application). The spec does not say whether refused calls count; here only accepted creations
 * occupy the window: the caller asks last, after every 400 check, and a 429 takes no place, so a
 * client that keeps retrying too early is not punished beyond the documented limit.
 */
export interface RateDecision {
  ok: boolean;
  /** Whole seconds until the oldest accepted call leaves the window (only when refused). */
  retryAfterSeconds: number;
}

export function createSlidingWindowLimiter(limit: number, windowMs: number) {
  const accepted: number[] = [];
  return {
    tryAcquire(now: number): RateDecision {
      while (accepted.length > 0 && (accepted[0] ?? 0) <= now - windowMs) accepted.shift();
      if (accepted.length < limit) {
        accepted.push(now);
        return { ok: true, retryAfterSeconds: 0 };
      }
      const oldest = accepted[0] ?? now;
      return {
        ok: false,
        retryAfterSeconds: Math.max(1, Math.ceil((oldest + windowMs - now) / 1000)),
      };
    },
  };
}
