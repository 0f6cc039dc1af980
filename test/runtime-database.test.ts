import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { openHistory } from "../src/history/index.js";
import { POOL_SIZE } from "../src/ledger/postgres-pool.js";
import { createRuntime } from "../src/runtime.js";
import { must } from "./helpers/must.js";
import { needs } from "./helpers/needs.js";
import { startTestPostgres, type TestPostgres } from "./helpers/postgres.js";
import { waitUntil } from "./helpers/wait-until.js";

/**
 * The runtime's one connection pool to CRM_DATABASE_URL, counted by PostgreSQL itself
 * (pg_stat_activity, by the application_name the URL gives this runtime): the ledger, the
 * history's catalogue and the audit trail, all busy at once, hold no more connections than one
 * pool allows, and closing the runtime leaves none. test/http/team-connections.test.ts counts a
 * whole `serve --http` process and `sync` the same way.
 */
const NAME = "runtime-under-test";

let db: TestPostgres;
let admin: pg.Pool;
let dir: string;

async function connectionsOf(name: string): Promise<number> {
  const { rows } = await admin.query<{ n: string }>(
    "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1",
    [name],
  );
  return Number(rows[0]?.n);
}

describe("the runtime's connections to PostgreSQL", needs("postgresql"), () => {
  beforeAll(async () => {
    db = await startTestPostgres();
    admin = new pg.Pool({ connectionString: db.url, max: 1 });
    dir = await mkdtemp(join(tmpdir(), "runtime-database-"));
  }, 60_000);

  afterAll(async () => {
    await admin?.end();
    await db?.stop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it("shares one pool among ledger, catalogue and audit trail, and closing leaves no connection", async () => {
    const runtime = createRuntime(
      loadConfig({
        CRM_DATA_DIR: dir,
        CRM_DATABASE_URL: `${db.url}?application_name=${NAME}`,
        CRM_SANDBOX_NOW: "2026-11-22T01:00:00",
      }),
    );
    let closed = false;
    try {
      const history = must(await runtime.history.history(), "the history (on by default)");
      // Many statements of the three at once: each store alone could fill a pool of its own.
      const burst = Array.from({ length: 4 * POOL_SIZE }, (_, i) => {
        if (i % 3 === 0) return runtime.ledger.recent(5);
        if (i % 3 === 1) return history.catalogue();
        return runtime.audit.record({
          at: Date.parse("2026-11-22T00:00:00Z") + i,
          caller: { kind: "token", name: "alice" },
          tool: "check_export",
          args: {},
          outcome: "ok",
          durationMs: 3,
        });
      });
      await Promise.all(burst);
      // An idle connection stays open for 30 s: what the burst opened is all still there.
      expect(await connectionsOf(NAME)).toBe(POOL_SIZE);
      const audited = await admin.query<{ n: string }>(
        "SELECT count(*) AS n FROM crm_audit_calls WHERE caller = 'alice'",
      );
      expect(Number(audited.rows[0]?.n)).toBe(burst.filter((_, i) => i % 3 === 2).length);

      await runtime.close();
      closed = true;
      // A backend ends a moment after its client said goodbye.
      await waitUntil(async () => (await connectionsOf(NAME)) === 0, "no connection left");
      expect(await connectionsOf(NAME)).toBe(0);
    } finally {
      if (!closed) await runtime.close();
    }
  });

  it("refuses a history of CRM_DATABASE_URL opened without the process's connection", () => {
    // Else it would open a pool of its own, or keep a catalogue in a file the team never sees.
    const config = loadConfig({ CRM_DATA_DIR: dir, CRM_DATABASE_URL: db.url });
    expect(() => openHistory(config, dir, "scope")).toThrow(
      /catalogue is in CRM_DATABASE_URL: open the history with the process's connection/,
    );
  });
});
