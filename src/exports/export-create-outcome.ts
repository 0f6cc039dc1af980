import { ApiError, NetworkError } from "../api/errors.js";

/**
 * Whether a failed export-job creation certainly made no job, so its reservation of the local
 * budget is given back (budget.ts): the service refused it with a definitive answer, or it never
 * reached the service.
 *
 * - Any 4xx is a refusal: spec 7.2 answers every export error with 400 and a code
 *   (`ResourceNotFound`, `ResourceNotReady`, `LimitExceeded`, `UnAuthorized`, none for a malformed
 *   request), and a gateway in front may say 401, 403 or 404. A 429 is a refusal too: the limit
 *   turned the call away; its Retry-After still holds creations back (recordRateLimit).
 * - A connection that failed before anything was sent (refused, host not found, TLS) never
 *   reached the service.
 * - Everything else keeps the reservation, because the job may exist: a timeout or a connection
 *   cut after the request was sent, a 5xx (the service may have failed after creating it), a 2xx
 *   whose body could not be read, a call cancelled while the request was out.
 */
export function createCertainlyRefused(error: unknown): boolean {
  if (error instanceof NetworkError) return !error.requestSent;
  if (!(error instanceof ApiError) || error.status === undefined) return false;
  return error.status >= 400 && error.status < 500;
}
