import { setTimeout as delay } from "node:timers/promises";
import { log } from "../log.js";
import {
  AbortedError,
  ApiError,
  type ApiOperation,
  CandidateCacheNotReadyError,
  EngineError,
  NetworkError,
  RateLimitedError,
  ServerError,
  TimeoutError,
} from "./errors.js";
import { isTlsFailureCode, operationLabel } from "./to-api-error.js";

/**
 * Retries only where they are safe. Reads (get job, metrics) and recommend retry transient
 * failures with capped exponential backoff and full jitter; creating an export job is retried only
 * when the connection failed before anything was sent, because a second create would spend the
 * creation budget (limits.ts) or create a duplicate job.
 */

export interface RetryPolicy {
  /** Total attempts including the first. */
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Longest Retry-After we wait for when the caller gave no deadline. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  attempts: 4,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 60_000,
};

export interface RetryInfo {
  operation: ApiOperation;
  /** The attempt that just failed (1-based). */
  attempt: number;
  delayMs: number;
  error: ApiError;
}

export interface RetryOptions {
  operation: ApiOperation;
  policy: RetryPolicy;
  signal?: AbortSignal | undefined;
  deadline?: number | undefined;
  /** Injectable for tests; defaults to Math.random. */
  random?: (() => number) | undefined;
  /** Called before each backoff wait; awaited. */
  onRetry?: ((info: RetryInfo) => void | Promise<void>) | undefined;
}

/** Whether this operation may send the same request again after `error`. */
export function isRetryable(operation: ApiOperation, error: ApiError): boolean {
  if (operation === "create_export_job") {
    return error instanceof NetworkError && !error.requestSent;
  }
  if (operation === "download_export") return false;
  if (error instanceof NetworkError) return !isTlsFailureCode(error.code);
  if (error instanceof TimeoutError) return true;
  if (error instanceof CandidateCacheNotReadyError || error instanceof EngineError) return true;
  if (error instanceof RateLimitedError) return true;
  if (error instanceof ServerError) {
    return error.status === undefined || [500, 502, 503, 504].includes(error.status);
  }
  return false;
}

/** Full jitter: a uniform wait in [0, min(max, base * 2^(attempt-1))). */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.floor(random() * ceiling);
}

/** Runs `attempt` until it succeeds, fails for good, runs out of attempts, or of time. */
export async function withRetry<T>(
  attemptFn: (attempt: number) => Promise<T>,
  options: RetryOptions,
): Promise<T> {
  const { policy, signal, deadline, operation } = options;
  const random = options.random ?? Math.random;
  for (let attempt = 1; ; attempt++) {
    try {
      return await attemptFn(attempt);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (attempt >= policy.attempts || !isRetryable(operation, error)) throw error;
      let wait = backoffDelay(attempt, policy, random);
      if (error.retryAfterMs !== undefined) {
        // Retry-After (on a 429, 503, 412...) is the earliest moment a retry can succeed; waiting
        // less only burns attempts.
        if (deadline === undefined && error.retryAfterMs > policy.maxRetryAfterMs) throw error;
        wait = Math.max(wait, error.retryAfterMs);
      }
      // Never sleep past the deadline: a retry that cannot start in time is not worth waiting for.
      if (deadline !== undefined && Date.now() + wait >= deadline) throw error;
      if (signal?.aborted) throw aborted(operation, error);
      log.debug(`${operationLabel(operation)}: retrying after a transient failure`, {
        attempt,
        waitMs: wait,
        error: error.kind,
        status: error.status,
      });
      await options.onRetry?.({ operation, attempt, delayMs: wait, error });
      try {
        await delay(wait, undefined, signal === undefined ? undefined : { signal });
      } catch {
        throw aborted(operation, error);
      }
    }
  }
}

function aborted(operation: ApiOperation, last: ApiError): AbortedError {
  return new AbortedError(`${operationLabel(operation)} was cancelled.`, {
    operation,
    cause: last,
  });
}
