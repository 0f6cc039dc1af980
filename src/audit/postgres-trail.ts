import { PostgresConnection } from "../ledger/postgres-pool.js";
import { describeDatabase } from "../ledger/postgres-url.js";
import { log } from "../log.js";
import { auditRecord } from "./audit-arguments.js";
import type {
  AuditCall,
  AuditOutcome,
  AuditQuery,
  AuditRecord,
  AuditTrail,
} from "./audit-record.js";
import { settleWithin } from "./settle-within.js";

/**
 * The audit trail in PostgreSQL (table crm_audit_calls, created by the ledger's migrations):
 * every server process of a team writes one trail, read in one query. Rows are never deleted by
 * the server; how long they are kept is the operator's policy (see docs/team-mode.md).
 */
export class PostgresAuditTrail implements AuditTrail {
  readonly location: string;
  private readonly db: PostgresConnection;
  private readonly pending = new Set<Promise<void>>();

  constructor(
    url: string,
    /** How long record() waits for its insert before returning (the insert goes on). */
    private readonly waitMs = 2_000,
  ) {
    this.location = describeDatabase(url);
    this.db = new PostgresConnection(url, this.location);
  }

  record(call: AuditCall): Promise<void> {
    const record = auditRecord(call);
    const write = this.db
      .query(
        `INSERT INTO crm_audit_calls (at, caller, tool, arguments, outcome, error_kind, duration_ms)
         VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7)`,
        [
          new Date(record.at),
          record.caller,
          record.tool,
          JSON.stringify(record.arguments),
          record.outcome,
          record.error ?? null,
          record.duration_ms,
        ],
      )
      .then(
        () => undefined,
        (error: unknown) => {
          log.warn("audit trail not written", {
            trail: this.location,
            error: error instanceof Error ? error.message : String(error),
          });
        },
      );
    this.pending.add(write);
    void write.finally(() => this.pending.delete(write));
    return settleWithin(write, this.waitMs);
  }

  async list(query: AuditQuery = {}): Promise<AuditRecord[]> {
    const rows = await this.db.query<{
      at: Date;
      caller: string;
      tool: string;
      arguments: unknown;
      outcome: AuditOutcome;
      error_kind: string | null;
      duration_ms: number;
    }>(
      `SELECT at, caller, tool, arguments, outcome, error_kind, duration_ms FROM crm_audit_calls
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
      tool: row.tool,
      arguments: row.arguments,
      outcome: row.outcome,
      ...(row.error_kind === null ? {} : { error: row.error_kind }),
      duration_ms: row.duration_ms,
    }));
  }

  async close(): Promise<void> {
    await Promise.all([...this.pending]);
    await this.db.close();
  }
}
