/**
 * Typed errors for every row of spec section 7, plus the failures that happen before or around a
 * response (network, timeout, abort, an invalid body, a refused download). `message` is safe to
 * show to a user (no secrets, no raw body); `detail` keeps a truncated, redacted copy of the body
 * for diagnostics only.
 */

export type ApiOperation =
  | "recommend"
  | "create_export_job"
  | "get_export_job"
  | "campaign_metrics"
  | "download_export";

export type ApiErrorKind =
  | "authentication"
  | "not_found"
  | "cache_not_ready"
  | "engine_error"
  | "limit_exceeded"
  | "resource_not_ready"
  | "bad_request"
  | "rate_limited"
  | "server_error"
  | "network"
  | "timeout"
  | "aborted"
  | "invalid_response"
  | "download_refused"
  | "download_failed";

export interface ApiErrorInit {
  operation: ApiOperation;
  status?: number | undefined;
  /** The service's error code, wherever the body carried it (e.g. `LimitExceeded`). */
  code?: string | undefined;
  /** Truncated, redacted body for diagnostics; never part of `message`. */
  detail?: string | undefined;
  /** The response's `Retry-After`, in milliseconds from when it arrived, on any status. */
  retryAfterMs?: number | undefined;
  cause?: unknown;
}

export abstract class ApiError extends Error {
  abstract readonly kind: ApiErrorKind;
  /** Whether the same request may succeed if sent again later (drives retries and advice). */
  abstract readonly transient: boolean;
  readonly operation: ApiOperation;
  readonly status: number | undefined;
  readonly code: string | undefined;
  readonly detail: string | undefined;
  /** How long the service asked us to wait before trying again (`Retry-After`), when it said. */
  readonly retryAfterMs: number | undefined;

  constructor(message: string, init: ApiErrorInit) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.operation = init.operation;
    this.status = init.status;
    this.code = init.code;
    this.detail = init.detail;
    this.retryAfterMs = init.retryAfterMs;
  }
}

/** 401 on recommend, 400 `UnAuthorized` on export and metrics. */
export class AuthenticationError extends ApiError {
  readonly kind = "authentication";
  readonly transient = false;
}

/** 404 on recommend (no active slot), 400 `ResourceNotFound` on export and metrics. */
export class NotFoundError extends ApiError {
  readonly kind = "not_found";
  readonly transient = false;
}

/** 412: the recommendation candidate cache is warming up. */
export class CandidateCacheNotReadyError extends ApiError {
  readonly kind = "cache_not_ready";
  readonly transient = true;
}

/** 502: temporary recommendation engine error. */
export class EngineError extends ApiError {
  readonly kind = "engine_error";
  readonly transient = true;
}

/** 400 `LimitExceeded`: over EXPORT_MAX_SENDS sends or EXPORT_MAX_ROUNDS rounds in the range. */
export class LimitExceededError extends ApiError {
  readonly kind = "limit_exceeded";
  readonly transient = false;
}

/** 400 `ResourceNotReady`: no round in range has finished aggregating. */
export class ResourceNotReadyError extends ApiError {
  readonly kind = "resource_not_ready";
  readonly transient = false;
}

/** 400 without a known code: a missing or malformed parameter. */
export class BadRequestError extends ApiError {
  readonly kind = "bad_request";
  readonly transient = false;
}

/** 429: too many export-job creations. `retryAfterMs` is when the next attempt may succeed. */
export class RateLimitedError extends ApiError {
  readonly kind = "rate_limited";
  readonly transient = true;
}

/** 500, 503 and other 5xx statuses. */
export class ServerError extends ApiError {
  readonly kind = "server_error";
  readonly transient = true;
}

/** The connection failed (refused, reset, DNS). `requestSent` tells whether the service may have seen it. */
export class NetworkError extends ApiError {
  readonly kind = "network";
  readonly transient = true;
  readonly requestSent: boolean;
  constructor(message: string, init: ApiErrorInit & { requestSent: boolean }) {
    super(message, init);
    this.requestSent = init.requestSent;
  }
}

/** A connect, header or body timeout, or the caller's overall deadline. */
export class TimeoutError extends ApiError {
  readonly kind = "timeout";
  readonly transient = true;
}

/** The caller aborted (e.g. the MCP request was cancelled). */
export class AbortedError extends ApiError {
  readonly kind = "aborted";
  readonly transient = false;
}

/** The service answered 2xx with a body that does not match the spec. */
export class InvalidResponseError extends ApiError {
  readonly kind = "invalid_response";
  readonly transient = false;
}

/** Why a download was refused before or during the transfer. */
export type DownloadRefusalReason =
  | "expired"
  | "insecure"
  | "host_not_allowed"
  | "too_large"
  | "bad_url";

/** A download refused before connecting: expired URL, plain http, or a host not allowed. */
export class DownloadRefusedError extends ApiError {
  readonly kind = "download_refused";
  readonly transient = false;
  /** `expired` means a new export job is needed; the others are configuration or safety issues. */
  readonly reason: DownloadRefusalReason;
  constructor(message: string, init: ApiErrorInit & { reason: DownloadRefusalReason }) {
    super(message, init);
    this.reason = init.reason;
  }
}

/** A download that started but did not complete correctly (size mismatch, cut short, HTTP error). */
export class DownloadFailedError extends ApiError {
  readonly kind = "download_failed";
  readonly transient = true;
}
