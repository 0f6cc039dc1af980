import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isFileInUse } from "../../../src/files/in-use.js";
import { campaignRows, toCsv } from "../../analysis/campaign/fixture.js";
import { type Harness, startHarness } from "../../helpers/tool-harness.js";
import { waitUntil } from "../../helpers/wait-until.js";

/**
 * query_export through the MCP client on sandbox exports: answers checked against the CSV parsed
 * here with csv-parse (not by DuckDB), the description and its example queries, refusals,
 * caps within the result budget, and the files kept in use while a query reads them.
 */

let h: Harness;
const jobs: { id: string; path: string; rows: string[][] }[] = [];

async function exportCampaign(campaignId: string) {
  const r = await h.call("start_export", {
    type: "campaign_event_data",
    campaign_id: campaignId,
    wait_seconds: 30,
  });
  expect(r.isError, r.text).toBeFalsy();
  const path = r.structured.file_path as string;
  const rows = parse(await readFile(path), { relax_quotes: false }) as string[][];
  return { id: (r.structured.job as { _id: string })._id, path, rows: rows.slice(1) };
}

beforeAll(async () => {
  h = await startHarness({ env: { CRM_QUERY_TIMEOUT_SECONDS: "3" } });
  const campaigns = h.sandbox.world.campaigns.filter(
    (c) => c.role === "normal" && c.tasks.some((t) => t.aggregated),
  );
  for (const c of campaigns.slice(0, 2)) jobs.push(await exportCampaign(c._id));
}, 120_000);
afterAll(async () => {
  await h.close();
});

const countBy = (rows: string[][], col: number) => {
  const out = new Map<string, number>();
  for (const r of rows) out.set(r[col] as string, (out.get(r[col] as string) ?? 0) + 1);
  return out;
};

describe("query_export over MCP", () => {
  it("answers with the counts the file has, per the contract's structuredContent", async () => {
    const [a] = jobs;
    if (a === undefined) throw new Error("no export");
    const r = await h.call("query_export", {
      job_ids: [a.id],
      sql: "SELECT event_type, count(*) AS n FROM events GROUP BY 1 ORDER BY 1",
    });
    expect(r.isError, r.text).toBeFalsy();
    expect(new Map(r.structured.rows as [string, number][])).toEqual(countBy(a.rows, 3));
    expect(r.structured.columns).toEqual([
      { name: "event_type", type: "VARCHAR" },
      { name: "n", type: "BIGINT" },
    ]);
    expect(r.structured.row_count).toBe(countBy(a.rows, 3).size);
    expect(r.structured.truncated).toBe(false);
    expect(r.text).toContain("|event_type|n|");
  });

  it("queries two exports together, each row with its job_id", async () => {
    const [a, b] = jobs;
    if (a === undefined || b === undefined) throw new Error("two exports needed");
    const r = await h.call("query_export", {
      job_ids: [a.id, b.id],
      sql: "SELECT job_id, count(*) FILTER (WHERE event_type = 'message_sent'), count(DISTINCT task_id) FROM events GROUP BY 1",
    });
    expect(r.isError, r.text).toBeFalsy();
    const expected = [a, b].map((j) => [
      j.id,
      j.rows.filter((row) => row[3] === "message_sent").length,
      new Set(j.rows.map((row) => row[0])).size,
    ]);
    expect(new Set((r.structured.rows as unknown[][]).map((x) => JSON.stringify(x)))).toEqual(
      new Set(expected.map((x) => JSON.stringify(x))),
    );
  });

  it("without sql describes the data, and every example query it gives runs", async () => {
    const [a] = jobs;
    if (a === undefined) throw new Error("no export");
    const r = await h.call("query_export", { job_ids: [a.id] });
    expect(r.isError, r.text).toBeFalsy();
    const d = r.structured.description as {
      event_types: { event_type: string; rows: number }[];
      rounds_total: number;
      examples: string[];
    };
    expect(new Map(d.event_types.map((e) => [e.event_type, e.rows]))).toEqual(countBy(a.rows, 3));
    const rounds = new Set(a.rows.map((row) => `${row[0]}|${row[1]}|${row[2]}`));
    expect(d.rounds_total).toBe(rounds.size);
    expect(r.text).toContain("**Example queries**");
    expect(d.examples.length).toBeGreaterThanOrEqual(3);
    for (const sql of d.examples) {
      const run = await h.call("query_export", { job_ids: [a.id], sql });
      expect(run.isError, `${sql}\n${run.text}`).toBeFalsy();
    }
  });

  it("bad SQL: DuckDB's message and a hint, and the next call is answered", async () => {
    const [a] = jobs;
    if (a === undefined) throw new Error("no export");
    const r = await h.call("query_export", {
      job_ids: [a.id],
      sql: "SELECT no_such_column FROM events",
    });
    expect(r.isError).toBe(true);
    expect(r.text).toContain("no_such_column");
    expect(r.text).toContain("Hint:");
    const refused = await h.call("query_export", {
      job_ids: [a.id],
      sql: "SELECT 1; COPY (SELECT * FROM events) TO '/tmp/x.csv'",
    });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain("refused");
    const ok = await h.call("query_export", {
      job_ids: [a.id],
      sql: "SELECT count(*) FROM events",
    });
    expect(ok.structured.rows).toEqual([[a.rows.length]]);
  });

  it("refuses a file outside the data folder and a relative path", async () => {
    const folder = await mkdtemp(join(tmpdir(), "query-outside-"));
    try {
      const outside = join(folder, "campaign.csv");
      await writeFile(outside, toCsv(campaignRows(1, 5)));
      const r = await h.call("query_export", { files: [outside], sql: "SELECT 1" });
      expect(r.isError).toBe(true);
      expect(r.text).toContain("outside the data folder");
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
    const rel = await h.call("query_export", { files: ["exports/a.csv"], sql: "SELECT 1" });
    expect(rel.isError).toBe(true);
    expect(rel.text).toContain("absolute path");
  });

  it("accepts a downloaded file by path, with job_id NULL", async () => {
    const [a] = jobs;
    if (a === undefined) throw new Error("no export");
    const r = await h.call("query_export", {
      files: [a.path],
      sql: "SELECT count(*), count(job_id) FROM events",
    });
    expect(r.structured.rows).toEqual([[a.rows.length, 0]]);
  });

  it("a million rows: capped, counted whole, and said so", async () => {
    const [a] = jobs;
    if (a === undefined) throw new Error("no export");
    const r = await h.call("query_export", {
      job_ids: [a.id],
      sql: "SELECT range AS i FROM range(1000000)",
    });
    expect(r.structured.row_count).toBe(1_000_000);
    expect(r.structured.rows).toHaveLength(100);
    expect(r.structured.truncated).toBe(true);
    expect(r.text).toContain("Showing 30 of 1,000,000 rows");
  });

  it("a wide result stays within the result budget and says what it left out", async () => {
    const [a] = jobs;
    if (a === undefined) throw new Error("no export");
    const r = await h.call("query_export", {
      job_ids: [a.id],
      sql: "SELECT *, repeat('가나다', 60) AS wide FROM events",
      max_rows: 1000,
    });
    expect(r.isError, r.text).toBeFalsy();
    expect(r.structured.truncated).toBe(true);
    expect(r.structured.row_count).toBe(a.rows.length);
    expect((r.structured.rows as unknown[]).length).toBeLessThan(a.rows.length);
    const tokens = JSON.stringify(r.structured).length;
    // Korean counts a token a character: the whole structuredContent stays near its budget.
    expect(tokens).toBeLessThan(h.config.resultMaxTokens * 4);
    expect(r.text).toMatch(/Showing \d+ of [\d,]+ rows/);
    expect(r.text.length).toBeLessThan(20_000);
  });

  it("keeps the files in use while a query reads them, and stops it at the timeout", async () => {
    const [a] = jobs;
    if (a === undefined) throw new Error("no export");
    const pending = h.call("query_export", {
      job_ids: [a.id],
      sql: "SELECT count(*) FROM events, range(100000000000) t(i) WHERE md5(i::VARCHAR) LIKE 'zzzz%'",
    });
    let seen = false;
    let settled = false;
    pending.finally(() => {
      settled = true;
    });
    await waitUntil(
      () => {
        seen ||= isFileInUse(a.path);
        return seen || settled;
      },
      "the query to hold its file",
      { intervalMs: 10 },
    );
    const r = await pending;
    expect(seen).toBe(true);
    expect(r.isError).toBe(true);
    expect(r.text).toContain("3-second limit");
    expect(isFileInUse(a.path)).toBe(false);
  });
});
