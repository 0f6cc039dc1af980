import { mkdir, mkdtemp, readdir, rm, unlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { roleOf } from "../../src/analysis/event-roles.js";
import { exportsFolder } from "../../src/files/data-folder.js";
import { queryCacheFolder, sweepQueryCache } from "../../src/query/cache-files.js";
import { queryFiles } from "../../src/query/index.js";
import { conversionsSettled } from "../../src/query/parquet-cache.js";
import type { QuerySource } from "../../src/query/sources.js";
import { campaignRows, toCsv } from "../analysis/campaign/fixture.js";

/**
 * The Parquet copies of exports: made once and reused, made again when the export changes,
 * removed with the export; answers from a copy equal those counted here from the rows.
 */

const LIMITS = { memoryMb: 256, threads: 1, timeoutSeconds: 30 };
let dataFolder: string;
let file: string;
const converted: string[] = [];
const whens: string[] = [];

function query(sql: string, path = file, convertNowBytes?: number, conversionEventType?: string) {
  return queryFiles({
    sql,
    ...(conversionEventType === undefined ? {} : { conversionEventType }),
    files: [{ path, jobId: "job-1" }],
    limits: LIMITS,
    maxRows: 1000,
    spillParent: dataFolder,
    cache: {
      dataFolder,
      exportsFolder: exportsFolder(dataFolder),
      onConvert: (source: QuerySource, when) => {
        converted.push(source.path);
        whens.push(when);
      },
      ...(convertNowBytes === undefined ? {} : { convertNowBytes }),
    },
  });
}

const countBy = (rows: string[][]) => {
  const out = new Map<string, number>();
  for (const r of rows) out.set(r[3] as string, (out.get(r[3] as string) ?? 0) + 1);
  return out;
};

const cacheFiles = async () =>
  (await readdir(queryCacheFolder(dataFolder)).catch(() => [] as string[])).filter((n) =>
    n.endsWith(".parquet"),
  );

beforeAll(async () => {
  dataFolder = await mkdtemp(join(tmpdir(), "query-cache-"));
  await mkdir(exportsFolder(dataFolder), { recursive: true });
  file = join(exportsFolder(dataFolder), "exp_1.csv");
  await writeFile(file, toCsv(campaignRows(7)));
  // Fixed times, never the process clock: the fingerprint reads them, nothing compares them.
  await utimes(file, new Date("2026-01-01T00:00:00Z"), new Date("2026-01-01T00:00:00Z"));
});
afterAll(async () => {
  await rm(dataFolder, { recursive: true, force: true });
});

describe("Parquet copies of exports", () => {
  it("converts once, answers from the copy, and reuses it", async () => {
    const rows = campaignRows(7).slice(1);
    const sql = "SELECT event_type, count(*) FROM events GROUP BY 1";
    const first = await query(sql);
    expect(new Map(first.rows as [string, number][])).toEqual(countBy(rows));
    expect(converted).toEqual([file]);
    expect(await cacheFiles()).toHaveLength(1);
    const second = await query(
      "SELECT count(*), count(*) FILTER (WHERE user_id IS NULL), typeof(min(captured_at)), typeof(any_value(event_properties)), min(job_id) FROM events",
    );
    expect(converted).toHaveLength(1);
    expect(second.rows).toEqual([
      [rows.length, rows.filter((r) => r[4] === "").length, "TIMESTAMP", "JSON", "job-1"],
    ]);
    const messages = await query(
      "SELECT error_message, count(*) FROM events WHERE error_message IS NOT NULL GROUP BY 1",
    );
    const expected = new Map<string, number>();
    for (const r of rows) {
      if (r[9] !== "") expected.set(r[9] as string, (expected.get(r[9] as string) ?? 0) + 1);
    }
    expect(new Map(messages.rows as [string, number][])).toEqual(expected);
  });

  it("computes event_role over the copy, by each query's conversion type", async () => {
    const rows = campaignRows(7).slice(1);
    const sql = "SELECT event_role, count(*) FROM events GROUP BY 1";
    for (const conversion of [undefined, "kakao_story_clicked", "purchase"]) {
      const expected = new Map<string, number>();
      for (const r of rows) {
        const role = roleOf(r[3] as string, conversion);
        expected.set(role, (expected.get(role) ?? 0) + 1);
      }
      const result = await query(sql, file, undefined, conversion);
      expect(new Map(result.rows as [string, number][]), conversion).toEqual(expected);
    }
    // One copy served all three: the role is not stored in it.
    expect(converted).toHaveLength(1);
    expect(await cacheFiles()).toHaveLength(1);
  });

  it("makes a new copy when the export changes, and the sweep removes the stale one", async () => {
    const changed = campaignRows(8, 30);
    await writeFile(file, toCsv(changed));
    await utimes(file, new Date("2026-01-02T00:00:00Z"), new Date("2026-01-02T00:00:00Z"));
    const result = await query("SELECT count(*) FROM events");
    expect(result.rows).toEqual([[changed.length - 1]]);
    expect(converted).toHaveLength(2);
    expect(await cacheFiles()).toHaveLength(2);
    await sweepQueryCache(dataFolder, exportsFolder(dataFolder), () => false);
    expect(await cacheFiles()).toHaveLength(1);
    await query("SELECT 1");
    expect(converted).toHaveLength(2);
  });

  it("removes the copy with its export, and leaves a copy whose export is being read", async () => {
    await sweepQueryCache(dataFolder, exportsFolder(dataFolder), () => false);
    expect(await cacheFiles()).toHaveLength(1);
    await unlink(file);
    await sweepQueryCache(dataFolder, exportsFolder(dataFolder), (p) => p === file);
    expect(await cacheFiles()).toHaveLength(1);
    await sweepQueryCache(dataFolder, exportsFolder(dataFolder), () => false);
    expect(await cacheFiles()).toEqual([]);
  });

  it("answers a large export's first question from the CSV and makes its copy in the background", async () => {
    const big = join(exportsFolder(dataFolder), "exp_big.csv");
    const rows = campaignRows(9, 40);
    await writeFile(big, toCsv(rows));
    await utimes(big, new Date("2026-01-03T00:00:00Z"), new Date("2026-01-03T00:00:00Z"));
    const before = converted.length;
    // Any size counts as large here: the copy is never made before the first answer.
    const first = await query("SELECT count(*) FROM events", big, 0);
    expect(first.rows).toEqual([[rows.length - 1]]);
    expect(converted.slice(before)).toEqual([big]);
    expect(whens.at(-1)).toBe("background");
    await conversionsSettled();
    const copies = await cacheFiles();
    expect(copies).toHaveLength(1);
    // The next question reads the copy: no conversion is started again, and the answer is equal.
    const second = await query("SELECT count(*), min(job_id) FROM events", big, 0);
    expect(second.rows).toEqual([[rows.length - 1, "job-1"]]);
    expect(converted.slice(before)).toEqual([big]);
    await unlink(big);
    await sweepQueryCache(dataFolder, exportsFolder(dataFolder), () => false);
    expect(await cacheFiles()).toEqual([]);
  });
});
