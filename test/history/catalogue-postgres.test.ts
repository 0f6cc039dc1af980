import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresCatalogueStore } from "../../src/history/catalogue-postgres.js";
import { queryHistory } from "../../src/history/query.js";
import { PostgresConnection } from "../../src/ledger/postgres-pool.js";
import { needs } from "../helpers/needs.js";
import { startTestPostgres, type TestPostgres } from "../helpers/postgres.js";
import { describeCatalogueStore } from "./catalogue-suite.js";
import { historyFixture, userRows, writeCampaignCsv } from "./fixtures.js";

let db: TestPostgres | undefined;
/** The connection of this test process, as a server process has one. */
let connection: PostgresConnection | undefined;
const url = () => {
  if (db === undefined) throw new Error("test PostgreSQL not started");
  return db.url;
};
const shared = () => {
  connection ??= new PostgresConnection(url());
  return connection;
};

describe("the history catalogue in PostgreSQL", needs("postgresql"), () => {
  beforeAll(async () => {
    db = await startTestPostgres();
  }, 60_000);
  afterAll(async () => {
    await connection?.close();
    await db?.stop();
  });

  describeCatalogueStore("PostgreSQL", {
    open: (scope) => new PostgresCatalogueStore(shared(), scope),
  });

  it("two server processes' histories on one folder and database add a job once and read the same rows", async () => {
    // Each process has its own connection.
    const processes = [new PostgresConnection(url()), new PostgresConnection(url())] as const;
    const f = await historyFixture({
      store: () => new PostgresCatalogueStore(processes[0], "team"),
    });
    try {
      const rows = [
        ...userRows({ task: "t1", at: "2026-10-05 09:00:00" }, "1", [
          "message_sent",
          "message_received",
        ]),
        ...userRows({ task: "t2", at: "2026-11-05 09:00:00" }, "2", ["message_sent"]),
      ];
      const path = await writeCampaignCsv(join(f.dir, "a.csv"), rows);
      const other = f.reopen(new PostgresCatalogueStore(processes[1], "team"));
      const input = {
        path,
        jobId: "job-pg",
        campaignId: "camp-pg",
        window: { from: "2026-10-01T00:00:00Z" },
        jobCreatedAt: "2026-11-10T00:00:00Z",
      };
      const results = await Promise.all([
        f.history.ingestCampaignExport(input),
        other.ingestCampaignExport(input),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual(["added", "already_added"]);
      const limits = { memoryMb: 256, threads: 1, timeoutSeconds: 60 };
      for (const history of [f.history, other]) {
        const answer = await queryHistory(history, {
          sql: "SELECT campaign_id, job_id, count(*) FROM history GROUP BY ALL",
          maxRows: 10,
          limits,
          spillParent: f.dir,
        });
        expect(answer.rows).toEqual([["camp-pg", "job-pg", 3]]);
      }
      // The catalogue's rows are there for a person with psql, too.
      const { default: pg } = await import("pg");
      const client = new pg.Client({ connectionString: url() });
      await client.connect();
      try {
        const exported = await client.query(
          "SELECT job_id, kind, subject_id, rows FROM crm_history_exports WHERE scope = 'team'",
        );
        expect(exported.rows).toEqual([
          { job_id: "job-pg", kind: "campaign_event_data", subject_id: "camp-pg", rows: "3" },
        ]);
        const partitions = await client.query(
          "SELECT dir FROM crm_history_partitions WHERE scope = 'team' ORDER BY dir",
        );
        expect(partitions.rows.map((r) => r.dir)).toEqual([
          "events/campaign_id=camp-pg/round_month=2026-10",
          "events/campaign_id=camp-pg/round_month=2026-11",
        ]);
      } finally {
        await client.end();
      }
    } finally {
      await f.close();
      await Promise.all(processes.map((p) => p.close()));
    }
  });
});
