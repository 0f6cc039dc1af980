import type { PostgresConnection } from "../ledger/postgres-pool.js";
import { auditRecord } from "./audit-arguments.js";
import {
  type AuditCall,
  type AuditOutcome,
  type AuditQuery,
  type AuditRecord,
  type AuditTrail,
  type CallerKind,
  kindOfName,
} from "./audit-record.js";
import { notWritten } from "./not-written.js";
import { settleWithin } from "./settle-within.js";

/**
 * The audit trail in PostgreSQL (table crm_audit_calls, created by the ledger's migrations):
 * every server process of a team writes one trail, read in one query. Rows are never deleted by
 * the server; how long they are kept is the operator's policy (see docs/team-mode.md).
 */
export class PostgresAuditTrail implements AuditTrail {
  readonly location: string;
  private readonly pending = new Set<Promise<void>>();

  /** On the process's connection to the database, which the ledger shares. */
  constructor(
    private readonly db: PostgresConnection,
    /** How long record() waits for its insert before returning (the insert goes on). */
    private readonly waitMs = 2_000,
  ) {
    this.location = db.location;
  }

  record(call: AuditCall): Promise<void> {
    let record: AuditRecord;
    try {
      record = auditRecord(call);
    } catch (error) {
      notWritten(this.location, error);
      return Promise.resolve();
    }
    // While the database is away the record is held in memory and written once it answers
    // (ledger/postgres-backlog.ts): the call is not held up, and its record is not lost.
    const write = this.db
      .queryOrHold(
        `INSERT INTO crm_audit_calls (at, caller, caller_kind, caller_issuer, caller_subject,
           caller_client_id, tool, arguments, outcome, error_kind, duration_ms)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11)`,
        [
          new Date(record.at),
          record.caller,
          record.caller_kind,
          record.issuer ?? null,
          record.subject ?? null,
          record.client_id ?? null,
          record.tool,
          JSON.stringify(record.arguments),
          record.outcome,
          record.error ?? null,
          record.duration_ms,
        ],
      )
      .then(
        () => undefined,
        (error: unknown) => notWritten(this.location, error),
      );
    this.pending.add(write);
    void write.finally(() => this.pending.delete(write));
    return settleWithin(write, this.waitMs);
  }

  async list(query: AuditQuery = {}): Promise<AuditRecord[]> {
    const rows = await this.db.query<{
      at: Date;
      caller: string;
      caller_kind: CallerKind | null;
      caller_issuer: string | null;
      caller_subject: string | null;
      caller_client_id: string | null;
      tool: string;
      arguments: unknown;
      outcome: AuditOutcome;
      error_kind: string | null;
      duration_ms: number;
    }>(
      `SELECT at, caller, caller_kind, caller_issuer, caller_subject, caller_client_id, tool,
              arguments, outcome, error_kind, duration_ms
         FROM crm_audit_calls
        WHERE ($1::timestamptz IS NULL OR at >= $1) AND ($2::text IS NULL OR caller = $2)
        ORDER BY at DESC, id DESC LIMIT $3`,
      [
        query.since === undefined ? null : new Date(query.since),
        query.caller ?? null,
        query.limit ?? null,
      ],
    );
    return rows.reverse().map((row) => ({
      at: row.at.toISOString(),
      caller: row.caller,
      caller_kind: row.caller_kind ?? kindOfName(row.caller),
      ...(row.caller_issuer === null ? {} : { issuer: row.caller_issuer }),
      ...(row.caller_subject === null ? {} : { subject: row.caller_subject }),
      ...(row.caller_client_id === null ? {} : { client_id: row.caller_client_id }),
      tool: row.tool,
      arguments: row.arguments,
      outcome: row.outcome,
      ...(row.error_kind === null ? {} : { error: row.error_kind }),
      duration_ms: row.duration_ms,
    }));
  }

  /**
   * Waits for the inserts under way (one the database holds back stays held: the connection's
   * close writes it, or logs it lost); the connection is its opener's to close.
   */
  async close(): Promise<void> {
    await Promise.all([...this.pending]);
  }
}
