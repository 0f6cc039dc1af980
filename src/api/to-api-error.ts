import { DateTime } from "luxon";
import { log } from "../log.js";
import { redact } from "../redact.js";
import {
  AbortedError,
  type ApiError,
  type ApiOperation,
  AuthenticationError,
  BadRequestError,
  CandidateCacheNotReadyError,
  EngineError,
  InvalidResponseError,
  LimitExceededError,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  ResourceNotReadyError,
  ServerError,
  TimeoutError,
} from "./errors.js";
import {
  EXPORT_CREATE_LIMIT,
  EXPORT_CREATE_WINDOW_SECONDS,
  EXPORT_SIZE_LIMIT_TEXT,
} from "./limits.js";

/**
 * Turns what the service or the network gave us into the typed errors of spec section 7.
 * Messages are short facts, safe to show: the operation, the status and code, what happened. What
 * to do about it is the tool layer's to say (src/mcp/error-text.ts), once. The body only ever
 * goes to `detail`, truncated and redacted.
 */

const DETAIL_LIMIT = 500;

/** The error codes spec 7.2 names; matched without regard to case or separators. */
const KNOWN_CODES = ["UnAuthorized", "ResourceNotFound", "LimitExceeded", "ResourceNotReady"];
const KNOWN_CODE_IN_TEXT = new RegExp(
  `\\b(${KNOWN_CODES.join("|")}|RESOURCE_NOT_FOUND|LIMIT_EXCEEDED|RESOURCE_NOT_READY)\\b`,
  "i",
);

const OPERATION_LABEL: Record<ApiOperation, string> = {
  recommend: "Recommendation",
  create_export_job: "Creating the export job",
  get_export_job: "Reading the export job",
  campaign_metrics: "The campaign metrics query",
  download_export: "The export download",
};

export function operationLabel(operation: ApiOperation): string {
  return OPERATION_LABEL[operation];
}

/** A copy of a body fit for diagnostics: redacted, then cut to a few hundred characters. */
export function bodyDetail(body: string): string | undefined {
  if (body.trim() === "") return undefined;
  const safe = redact(body);
  return safe.length > DETAIL_LIMIT ? `${safe.slice(0, DETAIL_LIMIT)}… (truncated)` : safe;
}

/**
 * Finds the service's error code wherever a real service plausibly puts it: `code`, `error_code`,
 * `errorCode`, `error` (string), `error.code`, `errors[0].code`, or a known code inside a text body.
 * A JSON body is read only through its code-bearing fields (and a `message` that is nothing but a
 * known code): free text such as "Unauthorized fields: campaign_id is required" or "see
 * ResourceNotReady" must not decide the error class when the body has its own structure.
 */
export function extractErrorCode(body: string): string | undefined {
  const json = tryParseJson(body);
  if (json === NOT_JSON) return KNOWN_CODE_IN_TEXT.exec(body)?.[1];
  return codeFromJson(json, 0);
}

function codeFromJson(json: unknown, depth: number): string | undefined {
  if (typeof json === "string") return knownCode(json) === undefined ? undefined : json;
  if (Array.isArray(json)) return depth < 2 ? codeFromJson(json[0], depth + 1) : undefined;
  if (!isRecord(json)) return undefined;
  const nestedError = json.error;
  const firstOfErrors = Array.isArray(json.errors) ? json.errors[0] : undefined;
  const candidates: unknown[] = [
    json.code,
    json.error_code,
    json.errorCode,
    typeof nestedError === "string" ? nestedError : undefined,
    isRecord(nestedError) ? nestedError.code : undefined,
    isRecord(nestedError) ? nestedError.error_code : undefined,
    isRecord(firstOfErrors) ? firstOfErrors.code : undefined,
    typeof firstOfErrors === "string" ? firstOfErrors : undefined,
  ];
  const codes = candidates.filter(
    (c): c is string => typeof c === "string" && /^[A-Za-z][A-Za-z0-9_.-]{1,63}$/.test(c),
  );
  // A known code wins over a generic one (e.g. `error: "Bad Request", code: "LimitExceeded"`).
  const known = codes.find((c) => knownCode(c) !== undefined);
  if (known !== undefined) return known;
  // `{"message": "ResourceNotReady"}`: a message that is the code itself, and nothing more.
  const messages = [json.message, isRecord(nestedError) ? nestedError.message : undefined];
  const codeAsMessage = messages.find(
    (m): m is string => typeof m === "string" && knownCode(m.trim()) !== undefined,
  );
  if (codeAsMessage !== undefined) return codeAsMessage.trim();
  return codes[0];
}

type KnownCode = "unauthorized" | "resourcenotfound" | "limitexceeded" | "resourcenotready";

function knownCode(code: string | undefined): KnownCode | undefined {
  if (code === undefined || !/^[A-Za-z][A-Za-z_.-]*$/.test(code)) return undefined;
  const normalized = code.toLowerCase().replace(/[^a-z]/g, "");
  switch (normalized) {
    case "unauthorized":
    case "unauthorised":
    case "resourcenotfound":
    case "limitexceeded":
    case "resourcenotready":
      return normalized === "unauthorised" ? "unauthorized" : normalized;
    default:
      return undefined;
  }
}

/**
 * `Retry-After` as delay-seconds or an HTTP date (RFC 9110 10.2.3), in milliseconds from `now`
 * (never negative). Anything else is ignored: a lenient parser turns "-1" or "Mon 10" into
 * "retry at once".
 */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // IMF-fixdate and the two obsolete forms RFC 9110 still asks recipients to accept.
  const at = DateTime.fromHTTP(text, { zone: "utc" });
  if (!at.isValid) return undefined;
  return Math.max(0, at.toMillis() - now);
}

export interface HttpFailure {
  operation: ApiOperation;
  status: number;
  body: string;
  retryAfter?: string | undefined;
  now: number;
}

/** Maps a non-2xx response to its typed error. */
export function mapHttpError(failure: HttpFailure): ApiError {
  const { operation, status, body } = failure;
  // A service echoing the key back as a "code" must not smuggle it into the message.
  const rawCode = extractErrorCode(body);
  const code = rawCode === undefined ? undefined : redact(rawCode);
  // Honoured on every status (412, 502, 503... may carry it too), not only on 429.
  const retryAfterMs = parseRetryAfter(failure.retryAfter, failure.now);
  const init = { operation, status, code, detail: bodyDetail(body), retryAfterMs };
  const known = knownCode(code);
  const label = operationLabel(operation);
  const failed = (what: string) =>
    `${label} failed: ${what} (HTTP ${status}${code === undefined ? "" : `, ${code}`}).`;
  if (init.detail !== undefined) {
    // The body never reaches the user-facing message; at debug level it helps diagnose.
    log.debug(`${label}: HTTP ${status}`, { code, detail: init.detail });
  }

  // The status decides where the spec gives it a meaning; a code in the body only refines a 400
  // (spec 7.2 puts every export error on 400) or a status the spec does not list.
  if (status === 401 || status === 403) return unauthorized(operation, init);
  if (status === 404) return notFound(operation, init);
  if (status === 412 && operation === "recommend") {
    return new CandidateCacheNotReadyError(failed("the candidate cache is not ready yet"), init);
  }
  if (status === 502 && operation === "recommend") {
    return new EngineError(failed("the recommendation engine had an error"), init);
  }
  if (status === 429) {
    const what =
      operation === "create_export_job"
        ? `rate limited, the service allows ${EXPORT_CREATE_LIMIT} export jobs per ${EXPORT_CREATE_WINDOW_SECONDS / 60} minutes`
        : "rate limited by the service";
    const wait =
      retryAfterMs === undefined ? "" : ` Retry-After: ${Math.ceil(retryAfterMs / 1000)} seconds.`;
    return new RateLimitedError(`${failed(what)}${wait}`, init);
  }
  if (status >= 500) {
    return new ServerError(failed("the service had an internal error"), init);
  }
  if (known === "unauthorized") return unauthorized(operation, init);
  if (known === "resourcenotfound") return notFound(operation, init);
  if (known === "limitexceeded") {
    return new LimitExceededError(
      failed(`the range is too large to export (over ${EXPORT_SIZE_LIMIT_TEXT})`),
      init,
    );
  }
  if (known === "resourcenotready") {
    return new ResourceNotReadyError(
      failed("no round in the range has finished aggregating yet"),
      init,
    );
  }
  if (status >= 400) {
    return new BadRequestError(failed("missing or malformed parameters"), init);
  }
  return new InvalidResponseError(
    `${label} failed: the service answered with unexpected HTTP status ${status}.`,
    init,
  );
}

function unauthorized(operation: ApiOperation, init: ErrorInit): AuthenticationError {
  const key = operation === "recommend" ? "the recommend secret key" : "the secret key";
  return new AuthenticationError(
    `${operationLabel(operation)} failed: the service rejected ${key} (${httpTag(init)}).`,
    init,
  );
}

function httpTag(init: ErrorInit): string {
  return `HTTP ${init.status}${init.code === undefined ? "" : `, ${init.code}`}`;
}

type ErrorInit = {
  operation: ApiOperation;
  status: number;
  code: string | undefined;
  detail?: string | undefined;
  retryAfterMs?: number | undefined;
};

function notFound(operation: ApiOperation, init: ErrorInit): NotFoundError {
  const what =
    operation === "recommend"
      ? "no active recommendation slot with this slot key, or no such application"
      : operation === "get_export_job" || operation === "download_export"
        ? "no such export job, or no such application"
        : operation === "campaign_metrics"
          ? "no such application"
          : "no such application, campaign or scenario";
  return new NotFoundError(
    `${operationLabel(operation)} failed: ${what} (${httpTag(init)}).`,
    init,
  );
}

/** Connection-level errors that prove nothing reached the server. */
const NOT_SENT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/** Certificate and TLS handshake failures (Node's `CERT_*`, `ERR_TLS_*`, `ERR_SSL_*` and kin). */
export function isTlsFailureCode(code: string | undefined): boolean {
  if (code === undefined) return false;
  return (
    /^(CERT_|ERR_TLS_|ERR_SSL_)/.test(code) ||
    code.includes("_CERT") ||
    code === "UNABLE_TO_VERIFY_LEAF_SIGNATURE" ||
    code === "HOSTNAME_MISMATCH"
  );
}

export interface TransportContext {
  operation: ApiOperation;
  /** The caller's own signal fired. */
  callerAborted: boolean;
  /** The overall deadline passed. */
  deadlineExpired: boolean;
}

/** Maps a thrown transport error (undici, DNS, socket, abort) to its typed error. */
export function mapTransportError(error: unknown, context: TransportContext): ApiError {
  const { operation } = context;
  const label = operationLabel(operation);
  const code = errorCode(error);
  const init = { operation, cause: sanitizeCause(error) };
  if (context.callerAborted) return new AbortedError(`${label} was cancelled.`, init);
  if (context.deadlineExpired) {
    return new TimeoutError(`${label} did not finish before its deadline.`, init);
  }
  if (code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT") {
    return new TimeoutError(
      `${label} timed out waiting for the service (${code === "UND_ERR_HEADERS_TIMEOUT" ? "no response" : "response stalled"}).`,
      init,
    );
  }
  if (isTlsFailureCode(code)) {
    // A certificate problem does not fix itself between retries, and "could not reach the
    // service" would send the user looking at the network instead of the certificate.
    return new NetworkError(
      `${label} failed: the secure (TLS) connection was rejected (${code}): the server's certificate is not trusted for this host.`,
      { ...init, code, requestSent: false },
    );
  }
  const requestSent = code === undefined || !NOT_SENT_CODES.has(code);
  const why =
    code === "UND_ERR_CONNECT_TIMEOUT"
      ? "connecting timed out"
      : code === "ECONNREFUSED"
        ? "connection refused"
        : code === "ENOTFOUND" || code === "EAI_AGAIN"
          ? "host name not found"
          : code === "ECONNRESET" || code === "UND_ERR_SOCKET"
            ? "connection closed by the other side"
            : "network error";
  return new NetworkError(`${label} failed: could not reach the service (${why}).`, {
    ...init,
    code,
    requestSent,
  });
}

/** The error code of an error or of any error in its cause chain. */
export function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && isRecord(current); depth++) {
    if (typeof current.code === "string") return current.code;
    current = current.cause;
  }
  return undefined;
}

/**
 * Keeps a cause for debugging without letting anything secret ride along: only the name, code
 * and a redacted message survive.
 */
function sanitizeCause(error: unknown): Error | undefined {
  if (!(error instanceof Error)) return undefined;
  const copy = new Error(redact(error.message));
  copy.name = error.name;
  const code = errorCode(error);
  if (code !== undefined) Object.assign(copy, { code });
  copy.stack = `${copy.name}: ${copy.message}`;
  return copy;
}

const NOT_JSON = Symbol("not JSON");

function tryParseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
