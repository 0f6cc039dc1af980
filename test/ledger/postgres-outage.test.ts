import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CreateExportJobRequest } from "../../src/api/schemas.js";
import { PostgresAuditTrail } from "../../src/audit/postgres-trail.js";
import { PostgresLedger } from "../../src/ledger/postgres-ledger.js";
import { PostgresConnection } from "../../src/ledger/postgres-pool.js";
import { DatabaseUnavailableError } from "../../src/ledger/postgres-unavailable.js";
import { getLogLevel, type LogLevel, setLogLevel } from "../../src/log.js";
import { needs } from "../helpers/needs.js";
import { startTestPostgres, type TestPostgres } from "../helpers/postgres.js";
import { job } from "./store-suite.js";

/**
 * The PostgreSQL ledger and audit trail while the database is away and after it is back: each
 * statement fails with the retryable DatabaseUnavailableError, the writes that must not be lost
 * are held and written first once it answers, and a connection the server ends under a running
 * transaction costs that transaction, not the process. test/http/postgres-restart.test.ts does
 * the same under load through the built server.
 */
let db: TestPostgres;
const budget = { count: 10, windowSeconds: 600 };
const request: CreateExportJobRequest = { type: "campaign_event_data", campaign_id: "c1" };
let level: LogLevel;

describe("the PostgreSQL ledger through an outage", needs("postgresql"), () => {
  beforeAll(async () => {
    // The outage's warnings are the expected ones here.
    level = getLogLevel();
    setLogLevel("error");
    db = await startTestPostgres();
  }, 60_000);
  afterAll(async () => {
    setLogLevel(level);
    await db?.stop();
  });

  it("fails statements with the retryable error, holds what must be written, and writes it first once the database is back", async () => {
    const now = () => Date.parse("2026-03-02T00:00:00Z");
    // As a server process has them: on one connection.
    const connection = new PostgresConnection(db.url);
    const ledger = new PostgresLedger(connection, budget, now, "outage");
    const trail = new PostgresAuditTrail(connection);
    try {
      const refused = await ledger.reserveCreate();
      const kept = await ledger.reserveCreate();
      if (!refused.reserved || !kept.reserved) throw new Error("both should be reserved");
      await trail.list();
      await db.halt();

      const failure = await ledger.count().catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(DatabaseUnavailableError);
      const text = (failure as Error).message;
      expect(text).toMatch(/database .* is unavailable right now.*Retry the same call/);
      expect(text).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|postgres:|\d{4,5}/);
      await expect(ledger.reserveCreate()).rejects.toBeInstanceOf(DatabaseUnavailableError);
      await expect(trail.list()).rejects.toBeInstanceOf(DatabaseUnavailableError);

      // The service made this job and refused the other creation while the database was away.
      const entry = await ledger.recordCreated(request, "k1", job("j1", "triggered"), "alice");
      expect(entry.job_id).toBe("j1");
      await ledger.refundCreate(refused);
      await trail.record({
        at: now(),
        caller: { kind: "token", name: "alice" },
        tool: "start_export",
        args: { campaign_id: "c1" },
        outcome: "ok",
        durationMs: 12,
      });
      await expect(ledger.get("j1")).rejects.toBeInstanceOf(DatabaseUnavailableError);

      await db.resume();
      // The first read after the outage already includes what was held.
      expect((await ledger.get("j1"))?.created_by).toBe("alice");
      expect((await ledger.budgetStatus()).used).toBe(1);
      expect((await trail.list()).map((r) => [r.caller, r.tool, r.outcome])).toEqual([
        ["alice", "start_export", "ok"],
      ]);
      const again = await ledger.reserveCreate();
      expect(again.reserved).toBe(true);
      expect((await ledger.budgetStatus()).used).toBe(2);
    } finally {
      await Promise.all([ledger.close(), trail.close()]);
      await connection.close();
    }
  }, 60_000);

  it("a connection ended between two statements of a transaction fails that transaction only", async () => {
    const connection = new PostgresConnection(db.url);
    const admin = new pg.Pool({ connectionString: db.url, max: 1 });
    try {
      const failure = await connection
        .transaction(async (client) => {
          const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
          const pid = rows[0]?.pid;
          const ended = new Promise((resolve) => client.once("end", resolve));
          await admin.query("SELECT pg_terminate_backend($1)", [pid]);
          // pg emits 'error' on the client as it reads the end of the connection, here between
          // two statements, then 'end': without a listener the process would end there.
          await ended;
          await client.query("SELECT 1");
        })
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(DatabaseUnavailableError);
      expect(await connection.query<{ one: number }>("SELECT 1 AS one", [])).toEqual([{ one: 1 }]);
    } finally {
      await admin.end();
      await connection.close();
    }
  });
});
