import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { summarizeFile } from "../../src/analysis/index.js";
import { campaignRows, HEADER, toCsv } from "../analysis/campaign/fixture.js";
import { type Run, runQueryBin } from "../helpers/run-query-bin.js";

/** The built bin's `query` command (dist/ is built first by this file's vitest project). */

const BIN = join(import.meta.dirname, "../../dist/cli.js");

function query(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return runQueryBin(BIN, args, env, 30_000);
}

let dir: string;
let fileA: string;
let fileB: string;
const rowsA = campaignRows(5).slice(1);
const rowsB = campaignRows(6, 30).slice(1);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "query-cli-"));
  fileA = join(dir, "a.csv");
  fileB = join(dir, "b.csv");
  await writeFile(fileA, toCsv([HEADER, ...rowsA]));
  await writeFile(fileB, toCsv([HEADER, ...rowsB]));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("crm-insights-mcp query", () => {
  it("--json prints exactly columns, rows, row_count and truncated, over two files", async () => {
    const run = await query([
      "--json",
      "--sql",
      "SELECT event_type, count(*) AS n FROM events GROUP BY 1 ORDER BY 1",
      fileA,
      fileB,
    ]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(Object.keys(out)).toEqual(["columns", "rows", "row_count", "truncated"]);
    const counts = new Map<string, number>();
    for (const r of [...rowsA, ...rowsB])
      counts.set(r[3] as string, (counts.get(r[3] as string) ?? 0) + 1);
    expect(out.rows).toEqual([...counts.entries()].sort(([a], [b]) => (a < b ? -1 : 1)));
    expect(out.columns).toEqual([
      { name: "event_type", type: "VARCHAR" },
      { name: "n", type: "BIGINT" },
    ]);
    expect(out).toMatchObject({ row_count: counts.size, truncated: false });
  });

  it("--max-rows caps the rows and keeps the whole row_count", async () => {
    const run = await query(["--json", "--max-rows", "3", "--sql", "FROM events", fileA]);
    const out = JSON.parse(run.stdout) as {
      rows: unknown[];
      row_count: number;
      truncated: boolean;
    };
    expect(out.rows).toHaveLength(3);
    expect(out.row_count).toBe(rowsA.length);
    expect(out.truncated).toBe(true);
  });

  it("--conversion-event-type chooses event_role's conversions, as summarize does", async () => {
    const sql = "SELECT event_role, count(*) FROM events GROUP BY 1 ORDER BY 1";
    for (const given of [undefined, "kakao_story_clicked"]) {
      const flag = given === undefined ? [] : ["--conversion-event-type", given];
      const run = await query(["--json", ...flag, "--sql", sql, fileA]);
      expect(run.stderr).toBe("");
      const summary = await summarizeFile(
        fileA,
        given === undefined ? {} : { conversionEventType: given },
      );
      if (summary.kind !== "campaign_event_data") throw new Error("not a campaign summary");
      const t = summary.totals;
      const other = summary.event_types
        .filter((e) => e.role === "other")
        .reduce((n, e) => n + e.count, 0);
      const expected = Object.entries({
        click: t.clicks,
        control: t.control_assigned,
        conversion: t.conversions,
        failed: t.failed,
        open: t.opens,
        other,
        received: t.received,
        sent: t.sent,
      }).filter(([, n]) => n > 0);
      expect((JSON.parse(run.stdout) as { rows: unknown }).rows, given).toEqual(expected);
      expect(expected.some(([role]) => role === "other")).toBe(given !== undefined);
    }
    const missing = await query(["--sql", sql, fileA, "--conversion-event-type"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("--conversion-event-type needs a value.");
  });

  it("prints a markdown table without --json", async () => {
    const run = await query([
      "--sql",
      "SELECT count(*) AS sends FROM events WHERE event_type = 'message_sent'",
      fileA,
    ]);
    const sends = rowsA.filter((r) => r[3] === "message_sent").length;
    expect(run.stdout).toContain("|sends|");
    expect(run.stdout).toContain(`|${sends.toLocaleString("en-US")}|`);
  });

  it("refuses a write with exit 1 and the reason on stderr", async () => {
    const run = await query(["--sql", `COPY (SELECT 1) TO '${join(dir, "out.csv")}'`, fileA]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("refused");
  });

  it("explains its usage and a bad setting", async () => {
    expect((await query([fileA])).code).toBe(2);
    const bad = await query(["--sql", "SELECT 1", fileA], { CRM_QUERY_THREADS: "0" });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("CRM_QUERY_THREADS");
  });
});
