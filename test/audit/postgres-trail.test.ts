import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuditCall } from "../../src/audit/audit-record.js";
import { PostgresAuditTrail } from "../../src/audit/postgres-trail.js";
import { PostgresConnection } from "../../src/ledger/postgres-pool.js";
import { needs } from "../helpers/needs.js";
import { startTestPostgres, type TestPostgres } from "../helpers/postgres.js";

let db: TestPostgres;

const T0 = Date.UTC(2026, 10, 22, 0, 0, 0);
const JWT = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJtYWxsb3J5In0.c2lnbmF0dXJlLWhlcmU";

function call(i: number, caller: string, extra: Partial<AuditCall> = {}): AuditCall {
  return {
    at: T0 + i * 1000,
    caller: { kind: "token", name: caller },
    tool: "query_export",
    args: { sql: `SELECT ${i}`, note: `token ${JWT}` },
    outcome: "ok",
    durationMs: 7,
    ...extra,
  };
}

describe("the audit trail in PostgreSQL", needs("postgresql"), () => {
  beforeAll(async () => {
    db = await startTestPostgres();
  }, 60_000);

  afterAll(async () => {
    await db?.stop();
  });

  it("keeps the calls of several processes in one table, masked, read oldest first", async () => {
    // Two processes, each with its connection.
    const connections = [new PostgresConnection(db.url), new PostgresConnection(db.url)] as const;
    const one = new PostgresAuditTrail(connections[0]);
    const two = new PostgresAuditTrail(connections[1]);
    try {
      await Promise.all([
        one.record(call(2, "alice")),
        two.record(call(1, "bob", { outcome: "error", error: "QueryError" })),
        one.record(call(3, "bob")),
      ]);
      const all = await two.list();
      expect(all).toEqual([
        {
          at: "2026-11-22T00:00:01.000Z",
          caller: "bob",
          caller_kind: "token",
          tool: "query_export",
          arguments: { sql: "SELECT 1", note: "token [REDACTED]" },
          outcome: "error",
          error: "QueryError",
          duration_ms: 7,
        },
        expect.objectContaining({ at: "2026-11-22T00:00:02.000Z", caller: "alice" }),
        expect.objectContaining({ at: "2026-11-22T00:00:03.000Z", caller: "bob" }),
      ]);
      expect((await one.list({ caller: "bob" })).map((r) => r.at)).toEqual([
        "2026-11-22T00:00:01.000Z",
        "2026-11-22T00:00:03.000Z",
      ]);
      expect((await one.list({ since: T0 + 2000 })).map((r) => r.caller)).toEqual(["alice", "bob"]);
      expect((await one.list({ limit: 1 })).map((r) => r.at)).toEqual(["2026-11-22T00:00:03.000Z"]);
      // What the table holds, read directly: no token anywhere in it.
      const pool = new pg.Pool({ connectionString: db.url });
      try {
        const rows = await pool.query("SELECT row_to_json(c)::text AS row FROM crm_audit_calls c");
        expect(rows.rows).toHaveLength(3);
        for (const { row } of rows.rows as Array<{ row: string }>) expect(row).not.toContain(JWT);
      } finally {
        await pool.end();
      }
    } finally {
      await Promise.all([one.close(), two.close()]);
      await Promise.all(connections.map((c) => c.close()));
    }
  });

  it("keeps each caller's kind and OAuth identity: a token and a subject of one name stay apart", async () => {
    const connection = new PostgresConnection(db.url);
    const trail = new PostgresAuditTrail(connection);
    try {
      await trail.record(call(10, "ops-bot"));
      await trail.record({
        ...call(11, "ops-bot"),
        caller: {
          kind: "oauth",
          name: "oauth:ops-bot",
          issuer: "https://login.example.com",
          subject: "ops-bot",
          clientId: "automation",
        },
      });
      expect(await trail.list({ caller: "ops-bot" })).toEqual([
        expect.objectContaining({ caller: "ops-bot", caller_kind: "token" }),
      ]);
      const [oauth, ...more] = await trail.list({ caller: "oauth:ops-bot" });
      expect(more).toEqual([]);
      expect(oauth).toMatchObject({
        caller: "oauth:ops-bot",
        caller_kind: "oauth",
        issuer: "https://login.example.com",
        subject: "ops-bot",
        client_id: "automation",
      });
    } finally {
      await trail.close();
      await connection.close();
    }
  });
});
