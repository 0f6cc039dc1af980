import { spawn } from "node:child_process";
import { mkdir, readdir, readFile, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { ownedTempPath } from "../../src/file-io/orphan-files.js";
import type { CatalogueChange, HistoryCatalogue } from "../../src/history/catalogue.js";
import { HistoryError } from "../../src/history/errors.js";
import { openHistory } from "../../src/history/index.js";
import { catalogueFilePath, stagingRoot } from "../../src/history/layout.js";
import { queryHistory } from "../../src/history/query.js";
import type { CatalogueStore } from "../../src/history/store.js";
import { loadDuckDb } from "../../src/query/engine.js";
import {
  type CsvRow,
  campaignCsv,
  type HistoryFixture,
  historyFixture,
  userRows,
  writeCampaignCsv,
} from "./fixtures.js";

const LIMITS = { memoryMb: 256, threads: 1, timeoutSeconds: 60 };
const OCT = { task: "t-oct", at: "2026-10-05 09:00:00" };
const NOV = { task: "t-nov", at: "2026-11-02 10:00:00", group: "그룹A" };

/** Two users, both rounds: 10 rows, 4 of them opens or purchases. */
const ROWS: CsvRow[] = [
  ...userRows(OCT, "1", ["message_sent", "message_received", "push_opened"]),
  ...userRows(OCT, "2", ["message_sent", "message_failed"]),
  ...userRows(NOV, "1", ["message_sent", "message_received", "push_opened", "purchase"]),
  ...userRows(NOV, "2", ["message_sent"]),
];

let f: HistoryFixture;
beforeAll(async () => {
  await loadDuckDb();
});
beforeEach(async () => {
  f = await historyFixture();
});
afterEach(async () => {
  await f.close();
});

function input(path: string, jobId = "job-1", created = "2026-11-10T00:00:00Z") {
  return { path, jobId, campaignId: "camp-1", window: {}, jobCreatedAt: created };
}

async function rows(sql: string, history = f.history) {
  return (await queryHistory(history, { sql, maxRows: 1000, limits: LIMITS, spillParent: f.dir }))
    .rows;
}

/** Every file under the history folder, relative, sorted. */
async function filesOf(folder: string): Promise<string[]> {
  const names = await readdir(folder, { recursive: true, withFileTypes: true }).catch(() => []);
  return names
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(folder.length + 1))
    .sort();
}

describe("adding an export", () => {
  it("writes one Parquet file per campaign and month, hive-style, the keys only in the folder names", async () => {
    const path = await writeCampaignCsv(join(f.dir, "a.csv"), ROWS);
    const result = await f.history.ingestCampaignExport({ ...input(path), campaignId: "c/1 é" });
    expect(result).toMatchObject({ status: "added", rows: 10, rows_kept: 10, rounds: 2 });
    expect(result.rounds_added).toBe(2);
    const all = (await filesOf(f.history.folder)).filter((n) => n.endsWith(".parquet"));
    const files = all.filter((n) => n.startsWith("events/"));
    expect(files).toHaveLength(2);
    expect(files[0]).toMatch(
      /^events\/campaign_id=c%2F1%20%C3%A9\/round_month=2026-10\/part-1-[0-9a-f]{12}\.parquet$/,
    );
    expect(files[1]).toMatch(/round_month=2026-11\//);
    // Beside each, its messages file, in the same partition folders.
    expect(all.filter((n) => !n.startsWith("events/"))).toEqual([
      expect.stringMatching(
        /^messages\/campaign_id=c%2F1%20%C3%A9\/round_month=2026-10\/part-1-[0-9a-f]{12}\.parquet$/,
      ),
      expect.stringMatching(/^messages\/campaign_id=c%2F1%20%C3%A9\/round_month=2026-11\//),
    ]);
    const duck = await loadDuckDb();
    const db = await duck.DuckDBInstance.create(":memory:");
    const c = await db.connect();
    try {
      const schema = await c.runAndReadAll(
        `SELECT name FROM parquet_schema('${join(f.history.folder, files[0] as string)}') WHERE name <> 'duckdb_schema'`,
      );
      expect(schema.getRows().map((r) => r[0])).toEqual([
        "task_id",
        "scheduled_at",
        "group",
        "event_type",
        "user_id",
        "platform_user_id",
        "captured_at",
        "channel",
        "error_code",
        "error_message",
        "event_properties",
        "custom_event_properties",
        "internal_event_properties",
        "job_id",
      ]);
    } finally {
      c.closeSync();
      db.closeSync();
    }
    expect(await rows("SELECT DISTINCT campaign_id, job_id FROM history")).toEqual([
      ["c/1 é", "job-1"],
    ]);
  });

  it("gives event_role by summarize_export's rules, and the campaign's row in history_campaigns", async () => {
    const path = await writeCampaignCsv(join(f.dir, "a.csv"), ROWS);
    // A quote is kept; a NUL character, which would end DuckDB's statement, is left out.
    await f.history.ingestCampaignExport({ ...input(path), campaignName: "가을 '세일'\0" });
    expect(await rows("SELECT event_role, count(*) FROM history GROUP BY 1 ORDER BY 1")).toEqual([
      ["conversion", 1],
      ["failed", 1],
      ["open", 2],
      ["received", 2],
      ["sent", 4],
    ]);
    expect(await rows("SELECT * FROM history_campaigns")).toEqual([
      [
        "camp-1",
        "가을 '세일'",
        ["app_push"],
        2,
        "2026-10-05 09:00:00",
        "2026-11-02 10:00:00",
        10,
        ["job-1"],
      ],
    ]);
  });

  it("adds a job once: a second call, and a second history on the same folder, add nothing", async () => {
    const path = await writeCampaignCsv(join(f.dir, "a.csv"), ROWS);
    const other = f.reopen();
    const [a, b] = await Promise.all([
      f.history.ingestCampaignExport(input(path)),
      other.ingestCampaignExport(input(path)),
    ]);
    expect([a.status, b.status].sort()).toEqual(["added", "already_added"]);
    expect((await f.history.ingestCampaignExport(input(path))).status).toBe("already_added");
    expect(await rows("SELECT count(*) FROM history")).toEqual([[10]]);
    expect((await f.history.catalogue()).exports).toHaveLength(1);
  });

  it("keeps each round once from the newest export; the older export's rounds stay where it alone has them", async () => {
    const whole = await writeCampaignCsv(join(f.dir, "whole.csv"), ROWS);
    // A later export of November only, after more opens arrived.
    const later = await writeCampaignCsv(join(f.dir, "nov.csv"), [
      ...userRows(NOV, "1", ["message_sent", "message_received", "push_opened", "purchase"]),
      ...userRows(NOV, "2", ["message_sent", "message_received", "push_opened"]),
    ]);
    const first = await f.history.ingestCampaignExport(
      input(later, "job-nov", "2026-11-12T00:00:00Z"),
    );
    // Added after, but created before: its November round loses.
    const second = await f.history.ingestCampaignExport(
      input(whole, "job-all", "2026-11-10T00:00:00Z"),
    );
    expect(first).toMatchObject({ rounds_added: 1, rows_kept: 7 });
    expect(second).toMatchObject({ rounds_added: 1, rounds_newer_kept: 1, rows_kept: 5 });
    expect(
      await rows("SELECT task_id, job_id, count(*) FROM history GROUP BY ALL ORDER BY 1"),
    ).toEqual([
      ["t-nov", "job-nov", 7],
      ["t-oct", "job-all", 5],
    ]);
    const newest = await writeCampaignCsv(
      join(f.dir, "nov2.csv"),
      userRows(NOV, "3", ["message_sent"]),
    );
    const third = await f.history.ingestCampaignExport(
      input(newest, "job-nov2", "2026-11-13T00:00:00Z"),
    );
    expect(third).toMatchObject({ rounds_replaced: 1, rows_kept: 1 });
    expect(
      await rows("SELECT task_id, job_id, count(*) FROM history GROUP BY ALL ORDER BY 1"),
    ).toEqual([
      ["t-nov", "job-nov2", 1],
      ["t-oct", "job-all", 5],
    ]);
    // The replaced files are gone: one events file and one messages file per partition.
    const files = (await filesOf(f.history.folder)).filter((n) => n.endsWith(".parquet"));
    expect(files.filter((n) => n.startsWith("events/"))).toHaveLength(2);
    expect(files.filter((n) => n.startsWith("messages/"))).toHaveLength(2);
  });
});

describe("files that are not added", () => {
  async function expectRefused(path: string, code: HistoryError["code"], text: RegExp) {
    const error = await f.history.ingestCampaignExport(input(path)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HistoryError);
    expect((error as HistoryError).code).toBe(code);
    expect((error as HistoryError).message).toMatch(text);
    const catalogue = await f.history.catalogue();
    expect(catalogue.generation).toBe(0);
    expect((await filesOf(f.history.folder)).filter((n) => !n.endsWith(".lock"))).toEqual([]);
    return (error as HistoryError).message;
  }

  it("a file cut in the middle of a line: the line and what is wrong, no row of it", async () => {
    const path = join(f.dir, "cut.csv");
    const text = campaignCsv(ROWS);
    await writeFile(path, text.slice(0, text.lastIndexOf("app_push") + "app_push".length));
    const message = await expectRefused(
      path,
      "malformed_file",
      /cut\.csv" cannot be added to the history: line 11: it has 8 fields where 13 are expected\. The file looks cut short/,
    );
    expect(message).not.toContain("u_2");
    expect(message).toContain("start_export with the same arguments and force: true");
  });

  it("a file cut inside a quoted field", async () => {
    const path = await writeCampaignCsv(join(f.dir, "quote.csv"), [
      ...ROWS,
      {
        ...(ROWS[4] as CsvRow),
        event_type: "message_failed",
        error_message: 'carrier said "no", line\r\ntwo',
      },
    ]);
    const text = await readFile(path, "utf8");
    await writeFile(path, text.slice(0, text.indexOf("line\r\ntwo") + 4));
    await expectRefused(path, "malformed_file", /a quoted field is never closed/);
  });

  it("a bad time or a cut JSON value", async () => {
    const badTime = await writeCampaignCsv(join(f.dir, "time.csv"), [
      ...ROWS,
      { ...(ROWS[0] as CsvRow), captured_at: "2026-10-05 9:00" },
    ]);
    await expectRefused(
      badTime,
      "malformed_file",
      /line 12: its captured_at field is not a valid time/,
    );
    const badJson = await writeCampaignCsv(join(f.dir, "json.csv"), [
      ...ROWS,
      { ...(ROWS[0] as CsvRow), internal_event_properties: '{"a":' },
    ]);
    await expectRefused(
      badJson,
      "malformed_file",
      /its internal_event_properties field is not a valid JSON text/,
    );
  });

  it("rows without scheduled_at", async () => {
    const path = await writeCampaignCsv(join(f.dir, "nosched.csv"), [
      ...ROWS,
      { ...(ROWS[0] as CsvRow), scheduled_at: "" },
    ]);
    await expectRefused(path, "malformed_file", /1 rows have no scheduled_at/);
  });

  it("a failure of the engine (out of memory) is passed on, not called a bad file", async () => {
    const starved = await historyFixture({ memoryMb: 1 });
    try {
      const path = await writeCampaignCsv(join(starved.dir, "a.csv"), ROWS);
      const error = await starved.history
        .ingestCampaignExport(input(path))
        .catch((e: unknown) => e);
      expect(error).not.toBeInstanceOf(HistoryError);
      expect((error as Error).message).toMatch(/Out of Memory/);
      expect((await starved.history.catalogue()).generation).toBe(0);
    } finally {
      await starved.close();
    }
  });

  it("another CSV, an empty file, a missing file", async () => {
    const other = join(f.dir, "other.csv");
    await writeFile(other, "a,b\n1,2\n");
    await expectRefused(other, "not_campaign_export", /not a campaign export/);
    const empty = join(f.dir, "empty.csv");
    await writeFile(empty, "");
    await expectRefused(empty, "malformed_file", /is empty/);
    await expectRefused(join(f.dir, "gone.csv"), "not_found", /was not found/);
  });
});

describe("the kept days (CRM_HISTORY_DAYS)", () => {
  it("leaves out rounds before the cutoff, and prune removes those the clock has passed", async () => {
    let now = Date.parse("2026-11-20T03:00:00Z");
    const days = await historyFixture({ keepDays: 40, now: () => now });
    try {
      const path = await writeCampaignCsv(join(days.dir, "a.csv"), ROWS);
      // Cutoff 2026-10-11: the October round is not kept.
      const result = await days.history.ingestCampaignExport(input(path));
      expect(result).toMatchObject({ rounds_added: 1, rounds_past_kept_days: 1, rows_kept: 5 });
      now = Date.parse("2026-12-13T03:00:00Z");
      expect(await days.history.prune()).toMatchObject({
        partitions_dropped: 1,
        rounds_removed: 1,
      });
      expect(await days.history.campaigns()).toEqual([]);
      expect((await filesOf(days.history.folder)).filter((n) => n.endsWith(".parquet"))).toEqual(
        [],
      );
      // The export stays known: adding it again adds nothing.
      expect((await days.history.ingestCampaignExport(input(path))).status).toBe("already_added");
    } finally {
      await days.close();
    }
  });
});

/** A catalogue store whose next commit fails, after the files were moved into place. */
class FailingStore implements CatalogueStore {
  readonly location = "failing";
  fail = true;
  constructor(private readonly inner: CatalogueStore) {}
  read(): Promise<HistoryCatalogue> {
    return this.inner.read();
  }
  commit(generation: number, change: CatalogueChange): Promise<HistoryCatalogue> {
    if (this.fail) return Promise.reject(new Error("the disk is full"));
    return this.inner.commit(generation, change);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

describe("a change that does not finish", () => {
  it("a failed commit leaves the history as it was, with no file it does not name", async () => {
    const path = await writeCampaignCsv(join(f.dir, "a.csv"), ROWS);
    await f.history.ingestCampaignExport(input(path, "job-1"));
    const before = await filesOf(f.history.folder);
    const { FileCatalogueStore } = await import("../../src/history/catalogue-file.js");
    const failing = new FailingStore(new FileCatalogueStore(catalogueFilePath(f.history.folder)));
    const broken = f.reopen(failing);
    const later = await writeCampaignCsv(
      join(f.dir, "b.csv"),
      userRows(NOV, "9", ["message_sent"]),
    );
    await expect(
      broken.ingestCampaignExport(input(later, "job-2", "2026-11-15T00:00:00Z")),
    ).rejects.toThrow("the disk is full");
    expect(await filesOf(f.history.folder)).toEqual(before);
    expect(await rows("SELECT job_id, count(*) FROM history GROUP BY 1")).toEqual([["job-1", 10]]);
    failing.fail = false;
    expect(
      (await broken.ingestCampaignExport(input(later, "job-2", "2026-11-15T00:00:00Z"))).status,
    ).toBe("added");
  });

  it("what a killed process leaves (its staging folder, a file no catalogue names) is swept at the next start", async () => {
    const path = await writeCampaignCsv(join(f.dir, "a.csv"), ROWS);
    await f.history.ingestCampaignExport(input(path));
    const before = await filesOf(f.history.folder);
    const dead = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    await new Promise((resolve) => dead.once("exit", resolve));
    const staging = ownedTempPath(join(stagingRoot(f.history.folder), "work"), "tmp").replace(
      `-${process.pid}.`,
      `-${dead.pid}.`,
    );
    await mkdir(join(staging, "events"), { recursive: true });
    await writeFile(join(staging, "events", "data_0.parquet"), "half");
    const moved = join(f.history.folder, "events", "campaign_id=camp-1", "round_month=2026-12");
    await mkdir(moved, { recursive: true });
    await writeFile(join(moved, "part-2-000000000000.parquet"), "never committed");
    // A reader meanwhile sees only what the catalogue names.
    expect(await rows("SELECT count(*) FROM history")).toEqual([[10]]);
    expect(await f.reopen().recover()).toEqual({ files: 1, staging: 1 });
    expect(await filesOf(f.history.folder)).toEqual(before);
  });

  it("a catalogue that cannot be read stops every change and removes nothing", async () => {
    const path = await writeCampaignCsv(join(f.dir, "a.csv"), ROWS);
    await f.history.ingestCampaignExport(input(path));
    const before = await filesOf(f.history.folder);
    await truncate(catalogueFilePath(f.history.folder), 20);
    const later = await writeCampaignCsv(
      join(f.dir, "b.csv"),
      userRows(NOV, "9", ["message_sent"]),
    );
    const error = await f.history
      .ingestCampaignExport(input(later, "job-2"))
      .catch((e: unknown) => e);
    expect((error as HistoryError).code).toBe("corrupt_catalogue");
    expect((error as HistoryError).message).toMatch(
      /cannot be read \(it is not JSON\)\. Nothing was changed/,
    );
    await expect(f.history.recover()).rejects.toThrow(/cannot be read/);
    expect(await filesOf(f.history.folder)).toEqual(before);
  });
});

describe("configuration", () => {
  it("CRM_HISTORY=off: no history; otherwise one per data folder and scope", async () => {
    expect(openHistory(loadConfig({ CRM_HISTORY: "off" }), f.dir, "abc")).toBeUndefined();
    const history = openHistory(loadConfig({ CRM_HISTORY_DAYS: "30" }), f.dir, "abc");
    expect(history?.folder).toBe(join(f.dir, "history", "abc"));
    await history?.close();
  });
});
