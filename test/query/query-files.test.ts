import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type QueryResult, queryFiles } from "../../src/query/index.js";
import { campaignRows, HEADER, toCsv } from "../analysis/campaign/fixture.js";
import { buildXlsx, METRICS } from "../analysis/scenario/xlsx-fixture.js";

/**
 * Answers of the `events` view compared with counts computed here from the rows the files were
 * written from (never by DuckDB): multi-line quoted messages, empty groups and user IDs, two
 * currencies, and two exports queried together.
 */

const LIMITS = { memoryMb: 256, threads: 1, timeoutSeconds: 30 };
let dir: string;
let fileA: string;
let fileB: string;
let xlsx: string;
const rowsA = campaignRows(1).slice(1);
const rowsB = campaignRows(2, 40).slice(1);
const col = (name: string) => HEADER.indexOf(name);

function query(
  sql: string,
  files: { path: string; jobId: string | null }[] = [{ path: fileA, jobId: "job-a" }],
  maxRows = 1000,
) {
  return queryFiles({ sql, files, limits: LIMITS, maxRows, spillParent: dir });
}

function countBy<T>(items: T[], key: (item: T) => string): Map<string, number> {
  const out = new Map<string, number>();
  for (const item of items) out.set(key(item), (out.get(key(item)) ?? 0) + 1);
  return out;
}

function asMap(result: QueryResult): Map<string, unknown> {
  return new Map(result.rows.map((r) => [String(r[0]), r[1]]));
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "query-files-"));
  fileA = join(dir, "a.csv");
  fileB = join(dir, "b.csv");
  await writeFile(fileA, toCsv([HEADER, ...rowsA]));
  // LF line ends in the second file: both kinds of files the service may write.
  await writeFile(fileB, toCsv([HEADER, ...rowsB], "\n"));
  xlsx = join(dir, "scenario.xlsx");
  const totals = (k: number) => METRICS.map((_, m) => (m + 1) * 10 * k);
  await writeFile(
    xlsx,
    await buildXlsx([
      {
        name: "요약",
        rows: [
          ["#", "채널", "A/B 테스트 분기", "메시지 노드 ID", ...METRICS],
          [1, "앱푸시", null, "node_1", ...totals(2)],
          [2, "알림톡", "A", "node_2", ...totals(1)],
        ],
      },
      {
        name: "#1 앱푸시",
        rows: [
          ["node_1"],
          ["날짜", ...METRICS],
          ["2025-03-01", ...totals(1)],
          ["2025-03-02", ...totals(1)],
        ],
      },
      {
        name: "#2 알림톡 A",
        rows: [["node_2"], ["날짜", ...METRICS], ["2025-03-02", ...totals(1)]],
      },
    ]),
  );
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("events over one campaign export", () => {
  it("counts rows per event type as the file has them", async () => {
    const result = await query("SELECT event_type, count(*) FROM events GROUP BY 1");
    const expected = countBy(rowsA, (r) => r[col("event_type")] as string);
    expect(asMap(result)).toEqual(expected);
    expect(result.columns.map((c) => c.type)).toEqual(["VARCHAR", "BIGINT"]);
  });

  it("reads empty fields as NULL: groups and user IDs", async () => {
    const result = await query(
      `SELECT count(*) FILTER (WHERE "group" IS NULL), count(*) FILTER (WHERE user_id IS NULL),
              count(*) FILTER (WHERE platform_user_id IS NULL), count(*) FILTER (WHERE channel IS NULL)
       FROM events`,
    );
    const empty = (name: string) => rowsA.filter((r) => r[col(name)] === "").length;
    expect(result.rows[0]).toEqual([
      empty("group"),
      empty("user_id"),
      empty("platform_user_id"),
      empty("channel"),
    ]);
    expect(empty("group")).toBeGreaterThan(0);
    expect(empty("user_id")).toBeGreaterThan(0);
  });

  it("distinct users per round, a user being platform_user_id or else user_id", async () => {
    const result = await query(
      `SELECT coalesce("group", '(none)'), count(DISTINCT coalesce(platform_user_id, user_id))
       FROM events WHERE event_type = 'message_sent' GROUP BY 1`,
    );
    const expected = new Map<string, number>();
    const seen = new Map<string, Set<string>>();
    for (const r of rowsA) {
      if (r[col("event_type")] !== "message_sent") continue;
      const user = r[col("platform_user_id")] || r[col("user_id")];
      if (!user) continue;
      const group = r[col("group")] || "(none)";
      seen.set(group, (seen.get(group) ?? new Set()).add(user));
    }
    for (const [g, users] of seen) expected.set(g, users.size);
    expect(asMap(result)).toEqual(expected);
  });

  it("keeps multi-line quoted messages whole, quotes and line breaks included", async () => {
    const result = await query(
      "SELECT error_message, count(*) FROM events WHERE error_message IS NOT NULL GROUP BY 1",
    );
    const expected = countBy(
      rowsA.filter((r) => r[col("error_message")] !== ""),
      (r) => r[col("error_message")] as string,
    );
    expect(asMap(result)).toEqual(expected);
    expect([...expected.keys()].some((m) => m.includes('"blocked"\r\nline two'))).toBe(true);
  });

  it("types times as TIMESTAMP and JSON columns so ->> works, revenue per currency", async () => {
    const result = await query(
      `SELECT event_properties->>'currency' AS currency, sum(CAST(event_properties->>'revenue' AS DOUBLE)),
              min(captured_at), typeof(min(scheduled_at))
       FROM events WHERE event_type = 'purchase' AND (event_properties->>'currency') IS NOT NULL
       GROUP BY 1 ORDER BY 1`,
    );
    const sums = new Map<string, number>();
    for (const r of rowsA) {
      if (r[col("event_type")] !== "purchase") continue;
      const props = JSON.parse(r[col("event_properties")] as string) as {
        revenue?: number;
        currency?: string;
      };
      if (props.currency === undefined) continue;
      sums.set(props.currency, (sums.get(props.currency) ?? 0) + (props.revenue ?? 0));
    }
    expect(result.rows.map((r) => r[0])).toEqual([...sums.keys()].sort());
    for (const row of result.rows)
      expect(row[1]).toBeCloseTo(sums.get(row[0] as string) as number, 6);
    expect(sums.size).toBe(2);
    expect(result.rows[0]?.[3]).toBe("TIMESTAMP");
    expect(result.columns[2]).toEqual({ name: "min(captured_at)", type: "TIMESTAMP" });
    expect(result.rows[0]?.[2]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
  });
});

describe("two exports together", () => {
  it("spans both files, each row with its job_id, and NULL for a file given by path", async () => {
    const both = [
      { path: fileA, jobId: "job-a" },
      { path: fileB, jobId: null },
    ];
    const result = await query(
      "SELECT coalesce(job_id, '(path)'), count(*) FROM events GROUP BY 1",
      both,
    );
    expect(asMap(result)).toEqual(
      new Map([
        ["job-a", rowsA.length],
        ["(path)", rowsB.length],
      ]),
    );
    const sent = await query("SELECT count(*) FROM events WHERE event_type = 'message_sent'", both);
    const expected = [...rowsA, ...rowsB].filter((r) => r[col("event_type")] === "message_sent");
    expect(sent.rows).toEqual([[expected.length]]);
  });
});

describe("scenario workbooks", () => {
  it("loads summary and daily rows with English aliases beside the Korean headers", async () => {
    const nodes = await query(
      `SELECT number, node_id, branch, "발송 수(건)", sends, conversions, job_id FROM scenario_nodes ORDER BY number`,
      [{ path: xlsx, jobId: "job-x" }],
    );
    expect(nodes.rows).toEqual([
      [1, "node_1", null, 20, 20, 140, "job-x"],
      [2, "node_2", "A", 10, 10, 70, "job-x"],
    ]);
    const days = await query(
      "SELECT node_id, count(*), sum(sends), min(date) FROM scenario_days GROUP BY 1 ORDER BY 1",
      [{ path: xlsx, jobId: null }],
    );
    expect(days.rows).toEqual([
      ["node_1", 2, 20, "2025-03-01"],
      ["node_2", 1, 10, "2025-03-02"],
    ]);
    expect(days.columns[3]?.type).toBe("DATE");
  });
});

describe("results", () => {
  it("caps rows and reports the whole row_count", async () => {
    const result = await query("SELECT * FROM events", undefined, 7);
    expect(result.rows).toHaveLength(7);
    expect(result.row_count).toBe(rowsA.length);
    expect(result.truncated).toBe(true);
    expect(result.truncated_by).toBe("max_rows");
  });

  it("caps the characters of the returned rows", async () => {
    const result = await queryFiles({
      sql: "SELECT repeat('x', 100) FROM range(1000)",
      files: [{ path: fileA, jobId: null }],
      limits: LIMITS,
      maxRows: 1000,
      maxChars: 5_000,
      spillParent: dir,
    });
    expect(JSON.stringify(result.rows).length).toBeLessThanOrEqual(5_000);
    expect(result.rows.length).toBeGreaterThan(10);
    expect(result).toMatchObject({ row_count: 1000, truncated: true, truncated_by: "characters" });
  });

  it("gives JSON-safe values for every kind of column", async () => {
    const result = await query(
      `SELECT 9007199254740993::BIGINT, 42::BIGINT, 170141183460469231731687303715884105727::HUGEINT,
              1.25::DECIMAL(10,2), DATE '2026-01-02', TIMESTAMP '2026-01-01 10:00:00', 'NaN'::DOUBLE,
              [1, 2], {'x': 1}, NULL, true, INTERVAL 2 HOUR`,
    );
    const row = result.rows[0];
    expect(row?.slice(0, 11)).toEqual([
      "9007199254740993",
      42,
      "170141183460469231731687303715884105727",
      1.25,
      "2026-01-02",
      "2026-01-01 10:00:00",
      "NaN",
      [1, 2],
      { x: 1 },
      null,
      true,
    ]);
    expect(typeof row?.[11]).toBe("string");
    expect(JSON.parse(JSON.stringify(result.rows))).toEqual(result.rows);
  });
});
