import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PostgresLedger } from "../../src/ledger/postgres-ledger.js";
import { PostgresConnection } from "../../src/ledger/postgres-pool.js";
import { migrate, SCHEMA_VERSION } from "../../src/ledger/postgres-schema.js";
import { needs } from "../helpers/needs.js";
import { startTestPostgres, type TestPostgres } from "../helpers/postgres.js";
import { describeLedgerStore } from "./store-suite.js";

let db: TestPostgres | undefined;
const url = () => {
  if (db === undefined) throw new Error("test PostgreSQL not started");
  return db.url;
};

describe("PostgreSQL ledger", needs("postgresql"), () => {
  beforeAll(async () => {
    db = await startTestPostgres();
  }, 60_000);
  afterAll(async () => {
    await db?.stop();
  });

  /** One connection per store: each stands for a server process of its own. */
  const connections: PostgresConnection[] = [];
  afterEach(async () => {
    await Promise.all(connections.splice(0).map((c) => c.close()));
  });

  describeLedgerStore("PostgreSQL", {
    open: (scope, budget, now, monotonic) => {
      const connection = new PostgresConnection(url());
      connections.push(connection);
      return new PostgresLedger(connection, budget, now, scope, monotonic);
    },
  });

  it("migrates once across processes starting together and refuses a newer schema", async () => {
    const pools = Array.from({ length: 4 }, () => new pg.Pool({ connectionString: url(), max: 2 }));
    try {
      await Promise.all(pools.map((p) => migrate(p)));
      const { rows } = await (pools[0] as pg.Pool).query<{ version: number }>(
        "SELECT version FROM crm_schema_migrations ORDER BY version",
      );
      expect(rows.map((r) => r.version)).toEqual(
        Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1),
      );
      await (pools[0] as pg.Pool).query(
        "INSERT INTO crm_schema_migrations (version, name) VALUES ($1, 'from the future')",
        [SCHEMA_VERSION + 1],
      );
      const fresh = new pg.Pool({ connectionString: url(), max: 1 });
      pools.push(fresh);
      await expect(migrate(fresh)).rejects.toThrow(/newer than this server/);
      await (pools[0] as pg.Pool).query("DELETE FROM crm_schema_migrations WHERE version = $1", [
        SCHEMA_VERSION + 1,
      ]);
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });

  it("names the database without its credentials", () => {
    const ledger = new PostgresLedger(
      new PostgresConnection("postgres://team:s3cret-pass@db.internal:5433/crm"),
      { count: 10, windowSeconds: 600 },
      Date.now,
      "x",
    );
    expect(ledger.location).toBe("PostgreSQL database crm on db.internal:5433");
  });
});
