import { DateTime } from "luxon";
import { TIME_ZONE } from "./world/time.js";

/**
 * The sandbox clock: "today" is pinned by the `now` option so the data is reproducible, while job
 * pacing and download-URL expiry still need time to pass. So sandbox time is `now` plus the real
 * time elapsed since start, read from an injectable source that tests can advance.
 */
export interface SandboxClock {
  /** Sandbox time in epoch ms. */
  now(): number;
  /** Sandbox time at start (the world's `now`). */
  readonly startedAt: number;
  /** Real milliseconds elapsed since start (drives the recommend cache warm-up). */
  sinceStart(): number;
}

export function createSandboxClock(base: number | undefined, real: () => number): SandboxClock {
  const realStart = real();
  const startedAt = base ?? realStart;
  return {
    startedAt,
    now: () => startedAt + (real() - realStart),
    sinceStart: () => real() - realStart,
  };
}

/**
 * Reads the `now` option: epoch ms, or ISO 8601. A value without an offset (or a bare date, read
 * as its 00:00) is taken in the application's zone, Asia/Seoul, like the API's own dates, so the
 * same flag gives the same data on every machine.
 */
export function parseNowOption(now: string | number | undefined): number | undefined {
  if (now === undefined) return undefined;
  const ms = typeof now === "number" ? now : DateTime.fromISO(now, { zone: TIME_ZONE }).toMillis();
  if (!Number.isFinite(ms)) {
    throw new Error(`Invalid sandbox "now": ${String(now)} (expected ISO 8601 or epoch ms)`);
  }
  return ms;
}

/**
 * A clock that starts at the pinned `now` option (read by parseNowOption) and advances with real
 * time from this call on; the real clock when nothing is pinned. Everything that follows the
 * sandbox's "today" outside the sandbox itself reads it, so all agree on one zone rule.
 */
export function pinnedClock(
  now: string | number | undefined,
  real: () => number = Date.now,
): () => number {
  const pinned = parseNowOption(now);
  if (pinned === undefined) return real;
  const realStart = real();
  return () => pinned + (real() - realStart);
}
