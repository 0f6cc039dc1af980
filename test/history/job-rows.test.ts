import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobRows } from "../../src/history/job-files.js";
import { loadDuckDb } from "../../src/query/engine.js";
import { csvReadSql, typedColumnsSql } from "../../src/query/events-view.js";
import { type HistoryFixture, historyFixture, userRows, writeCampaignCsv } from "./fixtures.js";

/**
 * The history's copy of one export's rows, for a question about that export: the rows the
 * statement gives are the rows DuckDB reads from the CSV itself, and an export whose round a
 * newer export replaced is marked incomplete.
 */

const OCT = { task: "t-oct", at: "2026-10-05 09:00:00" };
const NOV = { task: "t-nov", at: "2026-11-02 10:00:00" };

let f: HistoryFixture;
const paths: Record<string, string> = {};

beforeAll(async () => {
  f = await historyFixture();
  paths.old = await writeCampaignCsv(join(f.dir, "old.csv"), [
    ...userRows(OCT, "1", ["message_sent", "message_received", "push_opened"]),
    ...userRows(NOV, "2", ["message_sent", "message_received"]),
  ]);
  paths.new = await writeCampaignCsv(join(f.dir, "new.csv"), [
    ...userRows(NOV, "3", ["message_sent", "message_received", "purchase"]),
    ...userRows(NOV, "3", ["message_sent"]),
  ]);
  for (const [jobId, created] of [
    ["old", "2026-11-03T00:00:00Z"],
    ["new", "2026-11-04T00:00:00Z"],
  ] as const) {
    await f.history.ingestCampaignExport({
      path: paths[jobId] as string,
      jobId,
      campaignId: "camp-1",
      window: {},
      jobCreatedAt: created,
    });
  }
}, 60_000);

afterAll(async () => {
  await f?.close();
});

async function sorted(sql: string): Promise<string[]> {
  const duck = await loadDuckDb();
  const db = await duck.DuckDBInstance.create(":memory:");
  const c = await db.connect();
  try {
    const reader = await c.runAndReadAll(sql);
    return reader
      .getRows()
      .map((r) => JSON.stringify(r.map(String)))
      .sort();
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

describe("an export's rows in the history", () => {
  it("gives exactly the CSV's rows when every round of it is kept", async () => {
    const rows = await jobRows(f.history, "new");
    expect(rows).toMatchObject({ job_id: "new", rows: 4, rows_kept: 4, complete: true });
    expect(rows?.files).toHaveLength(1);
    const fromHistory = await sorted(`SELECT * EXCLUDE (job_id) FROM (${rows?.sql})`);
    expect(fromHistory).toHaveLength(4);
    expect(fromHistory).toEqual(
      await sorted(`SELECT ${typedColumnsSql()} FROM ${csvReadSql([paths.new as string])}`),
    );
  });

  it("marks an export incomplete when a newer one replaced a round of it", async () => {
    const rows = await jobRows(f.history, "old");
    expect(rows).toMatchObject({ job_id: "old", rows: 5, rows_kept: 3, complete: false });
    expect(await sorted(`SELECT task_id FROM (${rows?.sql})`)).toEqual(
      Array.from({ length: 3 }, () => JSON.stringify(["t-oct"])),
    );
  });

  it("gives nothing for a job the history does not hold", async () => {
    expect(await jobRows(f.history, "unknown")).toBeUndefined();
  });
});
