/**
 * The audit trail of tool calls: who called which tool, with which arguments (redacted and
 * bounded), how it ended and how long it took. Kept in PostgreSQL when CRM_DATABASE_URL is set
 * (every server process of a team writes the same table), else in rotating JSON-lines files in
 * the data folder. Read by `crm-insights-mcp audit`.
 */
/** `denied`: refused before it ran, for want of a scope (HTTP 403). */
export type AuditOutcome = "ok" | "error" | "cancelled" | "denied";

/** One tool call as the trail keeps it. */
export interface AuditRecord {
  /** When the call started, ISO 8601 UTC with milliseconds. */
  at: string;
  /** The token's subject, the static token's name, `local:<user>` on stdio, `anonymous` on an open loopback server. */
  caller: string;
  tool: string;
  /** The call's arguments with secrets masked and sizes bounded (see audit-arguments.ts). */
  arguments: unknown;
  outcome: AuditOutcome;
  /**
   * For an error: its kind (the error's class, e.g. ExportBudgetError), never its message; for a
   * denial, `insufficient_scope`.
   */
  error?: string;
  duration_ms: number;
}

/** A call as the server reports it, before the trail masks and bounds it. */
export interface AuditCall {
  /** Epoch ms. */
  at: number;
  caller: string;
  tool: string;
  args: unknown;
  outcome: AuditOutcome;
  error?: string | undefined;
  durationMs: number;
}

export interface AuditQuery {
  /** Epoch ms: calls that started at or after it. */
  since?: number | undefined;
  /** Exactly this caller. */
  caller?: string | undefined;
  /** The newest this many (still returned oldest first). */
  limit?: number | undefined;
}

export interface AuditTrail {
  /** Where the trail is, for messages (a folder, or "PostgreSQL database ..."). */
  readonly location: string;
  /**
   * Records a call. Never rejects: a trail that cannot be written is logged. Resolves once the
   * record is written, or after a short wait (the write goes on; close() waits for it), so an
   * unreachable database does not hold every tool call up.
   */
  record(call: AuditCall): Promise<void>;
  /** Matching calls, oldest first. */
  list(query?: AuditQuery): Promise<AuditRecord[]>;
  /** Waits for writes in progress, then releases the trail's resources. */
  close(): Promise<void>;
}
