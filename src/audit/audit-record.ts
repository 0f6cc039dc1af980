/**
 * The audit trail of tool calls: who called which tool, with which arguments (redacted and
 * bounded), how it ended and how long it took. Kept in PostgreSQL when CRM_DATABASE_URL is set
 * (every server process of a team writes the same table), else in rotating JSON-lines files in
 * the data folder. Read by `crm-insights-mcp audit`.
 */
/**
 * `denied`: refused before it ran: for want of a scope (HTTP 403), or an access token the
 * issuer signed that this server does not take (HTTP 401).
 */
export type AuditOutcome = "ok" | "error" | "cancelled" | "denied";

/**
 * How the caller proved who it is: a static token of CRM_HTTP_TOKENS, an OAuth access token, the
 * local user (stdio), or nobody (a loopback server without tokens).
 */
export type CallerKind = "token" | "oauth" | "local" | "anonymous";

/**
 * Who made a call. Names of different kinds never meet: a static token's name has no `:`,
 * an OAuth caller is `oauth:<claim value>`, a local one `local:<login name>`.
 */
export interface AuditCaller {
  kind: CallerKind;
  /** As `audit --caller` takes it, and as the ledger's created_by names the caller. */
  name: string;
  /** OAuth: the issuer, the token's `sub` and the client it was issued to (`client_id`/`azp`). */
  issuer?: string | undefined;
  subject?: string | undefined;
  clientId?: string | undefined;
}

/** One tool call as the trail keeps it. */
export interface AuditRecord {
  /** When the call started, ISO 8601 UTC with milliseconds. */
  at: string;
  /** The caller's name (AuditCaller.name). */
  caller: string;
  caller_kind: CallerKind;
  /** OAuth callers: the identity behind the name, which a mutable claim cannot change. */
  issuer?: string;
  subject?: string;
  client_id?: string;
  /**
   * The tool's name; for a refused request of several messages `(batch)`, for a refused access
   * token `(access token)`, for the count of denials left out by the rate limit `(suppressed)`.
   */
  tool: string;
  /** The call's arguments with secrets masked and sizes bounded (see audit-arguments.ts). */
  arguments: unknown;
  outcome: AuditOutcome;
  /**
   * For an error: its kind (the error's class, e.g. ExportBudgetError), never its message; for a
   * denial, `insufficient_scope` or `invalid_token`; for `(suppressed)`, how many.
   */
  error?: string;
  duration_ms: number;
}

/** A call as the server reports it, before the trail masks and bounds it. */
export interface AuditCall {
  /** Epoch ms. */
  at: number;
  caller: AuditCaller;
  tool: string;
  args: unknown;
  outcome: AuditOutcome;
  error?: string | undefined;
  durationMs: number;
}

export interface AuditQuery {
  /** Epoch ms: calls that started at or after it. */
  since?: number | undefined;
  /** Exactly this caller name. */
  caller?: string | undefined;
  /** The newest this many (still returned oldest first). */
  limit?: number | undefined;
}

export interface AuditTrail {
  /** Where the trail is, for messages (a folder, or "PostgreSQL database ..."). */
  readonly location: string;
  /**
   * Records a call. Never throws nor rejects: a trail that cannot be written is logged. Resolves
   * once the record is written, or after a short wait (the write goes on; close() waits for it),
   * so an unreachable database does not hold every tool call up.
   */
  record(call: AuditCall): Promise<void>;
  /** Matching calls, oldest first. */
  list(query?: AuditQuery): Promise<AuditRecord[]>;
  /** Waits for writes in progress, then releases the trail's resources. */
  close(): Promise<void>;
}

/** The kind of a record written before records said it: read from the name's form. */
export function kindOfName(name: string): CallerKind {
  if (name.startsWith("oauth:")) return "oauth";
  if (name === "local" || name.startsWith("local:")) return "local";
  return name === "anonymous" ? "anonymous" : "token";
}
