/**
 * The database went away (stopped, restarting, unreachable): the one failure of a PostgreSQL
 * statement that retrying later fixes. Tools show its message as it is; it names neither the
 * database nor the driver's words (they stay in the server's log).
 */
export class DatabaseUnavailableError extends Error {
  override name = "DatabaseUnavailableError";
  constructor(cause: unknown) {
    super(
      "the server's database (export ledger, budget, audit trail and history catalogue) is unavailable right now, a temporary outage. Retry the same call in a few seconds; what this call had done is kept (an export job it created stays in the ledger). If it persists, the server's operator should check PostgreSQL (CRM_DATABASE_URL).",
      { cause },
    );
  }
}

/** Node's socket errors for a server that cannot be reached or dropped the connection. */
const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/**
 * PostgreSQL's SQLSTATEs for the same: class 08 (connection exception), 57P01-57P03 (the server
 * shutting down, crashed, or not yet accepting connections) and 53300 (no connection slot left).
 */
function serverSaysUnavailable(code: string): boolean {
  return code.startsWith("08") || /^57P0[123]$/.test(code) || code === "53300";
}

/** pg's own errors for a connection lost or never made, which carry no code. */
const DRIVER_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable)/;

/** True when `error` says the database could not be reached or the connection was lost. */
export function isConnectionFailure(error: unknown): boolean {
  if (error instanceof DatabaseUnavailableError) return true;
  if (!(error instanceof Error)) return false;
  // Node reports a failed connection to every address of a host as one AggregateError.
  if (error instanceof AggregateError && error.errors.some(isConnectionFailure)) return true;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && (SOCKET_CODES.has(code) || serverSaysUnavailable(code))) {
    return true;
  }
  return DRIVER_MESSAGES.test(error.message);
}
