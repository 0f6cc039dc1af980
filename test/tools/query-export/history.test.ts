import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config.js";
import { HISTORY_EXAMPLES } from "../../../src/history/examples.js";
import { catalogueFilePath, historyFolder } from "../../../src/history/layout.js";
import { configLedgerScope } from "../../../src/runtime.js";
import type { SandboxCampaign } from "../../../src/sandbox/world/types.js";
import { untilKept } from "../../helpers/history-kept.js";
import { must } from "../../helpers/must.js";
import {
  type Harness,
  startHarness,
  type ToolResult,
  toResult,
} from "../../helpers/tool-harness.js";
import { namedCalls } from "../../prompts/named-calls.js";

/**
 * query_export with `history: true` through the SDK client on sandbox exports: an export of a
 * whole campaign and a later one of its last day leave each round once (against DuckDB's own
 * reading of the two files, deduplicated here, newest export first); a just-downloaded export is
 * in the next answer; the description's example calls each run; history and files in one
 * session; charts, refusals, CRM_HISTORY=off, an empty history and an unreadable catalogue.
 */

let h: Harness;
/** The campaign exported whole and then its last day; another exported whole. */
let repeated: SandboxCampaign;
let other: SandboxCampaign;
let wholeJob: string;
let lastDayJob: string;
let otherJob: string;
const folders: string[] = [];

const KST_MS = 9 * 3_600_000;
const kstDay = (ms: number) => new Date(ms + KST_MS).toISOString().slice(0, 10);

async function callOn(client: Client, name: string, args: Record<string, unknown>) {
  return toResult(await client.callTool({ name, arguments: args }));
}

async function exported(args: Record<string, unknown>): Promise<string> {
  const r = await h.call("start_export", {
    type: "campaign_event_data",
    wait_seconds: 50,
    ...args,
  });
  expect(r.isError, r.text).toBeFalsy();
  must(r.structured.file_path as string | undefined, "file_path of a finished export");
  return (r.structured.job as { _id: string })._id;
}

function kept(jobId: string): Promise<void> {
  return untilKept((args) => h.call("check_export", args), jobId);
}

function answer(r: ToolResult): unknown[][] {
  expect(r.isError, r.text).toBeFalsy();
  return r.structured.rows as unknown[][];
}

beforeAll(async () => {
  h = await startHarness({ env: { CRM_EXPORT_BUDGET: "20/600" } });
  const normal = h.sandbox.world.campaigns.filter((c) => c.role === "normal");
  // Several rounds on different days, the last one aggregated: its last day is a strict part.
  repeated = must(
    normal.find(
      (c) => c.tasks.length >= 3 && c.tasks.length <= 12 && c.tasks.every((t) => t.aggregated),
    ),
    "a campaign of a few rounds, all aggregated",
  );
  other = must(
    normal.find((c) => c !== repeated && c.tasks.length === 1 && c.tasks[0]?.aggregated),
    "a one-round campaign",
  );
  wholeJob = await exported({ campaign_id: repeated._id });
  const last = kstDay(must(repeated.tasks.at(-1), "the last round").scheduled_at);
  lastDayJob = await exported({ campaign_id: repeated._id, from: last, to: last, force: true });
  await kept(wholeJob);
  await kept(lastDayJob);
}, 180_000);
afterAll(async () => {
  await h?.close();
  for (const folder of folders) await rm(folder, { recursive: true, force: true });
});

describe("query_export with history: true", () => {
  it("keeps each round once, from the newest export, as DuckDB reads the two files", async () => {
    const perRound =
      "strftime(scheduled_at, '%Y-%m-%d %H:%M:%S') AS scheduled_at, coalesce(\"group\", '') AS grp";
    const fromHistory = answer(
      await h.call("query_export", {
        history: true,
        sql: `SELECT task_id, ${perRound}, job_id, count(*) AS n FROM history WHERE campaign_id = '${repeated._id}' GROUP BY ALL ORDER BY ALL`,
        max_rows: 1000,
      }),
    );
    const byHand = answer(
      await h.call("query_export", {
        job_ids: [wholeJob, lastDayJob],
        sql: `WITH r AS (SELECT task_id, ${perRound}, job_id, count(*) AS n FROM events GROUP BY ALL) SELECT task_id, scheduled_at, grp, job_id, n FROM r QUALIFY row_number() OVER (PARTITION BY task_id, scheduled_at, grp ORDER BY job_id = '${lastDayJob}' DESC) = 1 ORDER BY ALL`,
        max_rows: 1000,
      }),
    );
    expect(fromHistory).toEqual(byHand);
    expect(fromHistory.length).toBeGreaterThanOrEqual(repeated.tasks.length);
    // The two files overlap (the last day's rounds are in both), and the history took them from
    // the later export only.
    const inBoth = answer(
      await h.call("query_export", {
        job_ids: [wholeJob, lastDayJob],
        sql: 'SELECT count(*) FROM (SELECT task_id, scheduled_at, "group" FROM events GROUP BY ALL HAVING count(DISTINCT job_id) = 2)',
      }),
    );
    const overlapping = Number(inBoth[0]?.[0]);
    expect(overlapping).toBeGreaterThan(0);
    expect(fromHistory.filter((r) => r[3] === lastDayJob)).toHaveLength(overlapping);
    expect(fromHistory.filter((r) => r[3] === wholeJob).length).toBeGreaterThan(0);
  });

  it("answers with an export downloaded just before, without waiting for check_export", async () => {
    otherJob = await exported({ campaign_id: other._id });
    const r = await h.call("query_export", {
      history: true,
      sql: `SELECT count(*) FROM history WHERE job_id = '${otherJob}'`,
    });
    const inFile = answer(
      await h.call("query_export", { job_ids: [otherJob], sql: "SELECT count(*) FROM events" }),
    );
    expect(answer(r)).toEqual(inFile);
    expect(Number(inFile[0]?.[0])).toBeGreaterThan(0);
    expect(String(r.structured.summary)).not.toContain("still being added");
  });

  it("describes what it holds, and every example call it gives runs as written", async () => {
    const r = await h.call("query_export", { history: true });
    expect(r.isError, r.text).toBeFalsy();
    const d = r.structured.history as {
      campaigns: { campaign_id: string }[];
      campaigns_total: number;
      exports: number;
      rows: number;
      rounds_from: string;
      rounds_to: string;
      examples: { title: string; sql: string }[];
    };
    expect(d.campaigns.map((c) => c.campaign_id).sort()).toEqual([repeated._id, other._id].sort());
    expect(d.campaigns_total).toBe(2);
    expect(d.exports).toBe(3);
    const [[rows, first, last]] = answer(
      await h.call("query_export", {
        history: true,
        sql: "SELECT count(*), strftime(min(scheduled_at), '%Y-%m-%d %H:%M:%S'), strftime(max(scheduled_at), '%Y-%m-%d %H:%M:%S') FROM history",
      }),
    ) as [[number, string, string]];
    expect([d.rows, d.rounds_from, d.rounds_to]).toEqual([rows, first, last]);
    expect(d.examples).toEqual(HISTORY_EXAMPLES.map(({ title, sql }) => ({ title, sql })));
    expect(r.text).toContain(`${d.campaigns_total} campaign(s) from 3 export(s)`);

    const calls = namedCalls(r.text);
    expect(calls.map((c) => c.arguments)).toEqual(
      HISTORY_EXAMPLES.map(({ sql }) => ({ history: true, sql })),
    );
    for (const call of calls) {
      const ran = await h.call(call.tool, call.arguments);
      expect(ran.isError, `${call.arguments.sql}: ${ran.text}`).toBeFalsy();
      expect(ran.structured.row_count as number).toBeGreaterThan(0);
    }
  });

  it("reads the history and chosen exports in one session", async () => {
    const [[events, history]] = answer(
      await h.call("query_export", {
        history: true,
        job_ids: [otherJob],
        sql: `SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM history WHERE job_id = '${otherJob}')`,
      }),
    ) as [[number, number]];
    expect(events).toBeGreaterThan(0);
    expect(history).toBe(events);

    const described = await h.call("query_export", { history: true, job_ids: [otherJob] });
    expect(described.isError, described.text).toBeFalsy();
    expect(described.structured.description).toMatchObject({
      rounds_total: must(other.tasks[0], "its round").rounds.length,
    });
    expect(described.structured.history).toMatchObject({ campaigns_total: 2 });
    expect(described.text).toContain("**events**");
    expect(described.text).toContain("**History of exports**");
  });

  it("draws a history answer by its shape or as asked, like any other", async () => {
    const sql =
      "SELECT campaign_id, count(*) FILTER (WHERE event_role = 'received') AS received FROM history GROUP BY 1 ORDER BY 1";
    const drawn = await h.call("query_export", { history: true, sql });
    expect(drawn.structured.chart).toMatchObject({
      type: "bar",
      x: "campaign_id",
      y: ["received"],
    });
    const asked = await h.call("query_export", {
      history: true,
      sql,
      chart: { type: "table" },
    });
    expect(asked.structured.chart).toMatchObject({ type: "table" });
    const wrong = await h.call("query_export", {
      history: true,
      sql,
      chart: { type: "bar", x: "channel" },
    });
    expect(wrong.isError).toBe(true);
    expect(wrong.text).toContain("campaign_id");
  });

  it("refuses what it refuses over exports: writes, files, several statements", async () => {
    const ledger = join(h.dataDir, "ledger.json");
    for (const sql of [
      "COPY (SELECT * FROM history) TO '/tmp/history-copy.csv'",
      "SELECT 1; SELECT 2",
      `SELECT * FROM read_csv('${ledger}')`,
      "ATTACH ':memory:' AS other",
    ]) {
      const r = await h.call("query_export", { history: true, sql });
      expect(r.isError, sql).toBe(true);
      expect(r.text, sql).toMatch(/^Error in query_export: /);
    }
    const none = await h.call("query_export", { sql: "SELECT 1" });
    expect(none.isError).toBe(true);
    expect(none.text).toContain("history: true");
  });

  it("with CRM_HISTORY=off, says so and what to do instead", async () => {
    const off = await h.restart({ CRM_HISTORY: "off" });
    const r = await callOn(off, "query_export", { history: true, sql: "SELECT 1" });
    expect(r.isError).toBe(true);
    expect(r.text).toContain("CRM_HISTORY=off");
    expect(r.text).toContain("job_ids");
  });

  it("an empty history is described as such, with the way to fill it", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "crm-history-empty-"));
    folders.push(dataDir);
    const empty = await h.restart({ CRM_DATA_DIR: dataDir });
    const described = await callOn(empty, "query_export", { history: true });
    expect(described.isError, described.text).toBeFalsy();
    expect(described.structured.history).toMatchObject({ exports: 0, campaigns_total: 0 });
    expect(described.text).toContain("holds no export yet");
    expect(described.text).toContain("crm-insights-mcp sync");
    expect(String(described.structured.next_step)).toContain("start_export");

    const asked = await callOn(empty, "query_export", {
      history: true,
      sql: "SELECT count(*) AS n FROM history",
    });
    expect(answer(asked)).toEqual([[0]]);
    expect(String(asked.structured.next_step)).toContain("holds no export yet");
  });

  it("an unreadable catalogue is an error naming it and the way out", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "crm-history-corrupt-"));
    folders.push(dataDir);
    const config = loadConfig({ ...configEnv(), CRM_DATA_DIR: dataDir });
    const catalogue = catalogueFilePath(historyFolder(dataDir, configLedgerScope(config)));
    await mkdir(join(catalogue, ".."), { recursive: true });
    await writeFile(catalogue, "{ not json");
    const client = await h.restart({ CRM_DATA_DIR: dataDir });
    const r = await callOn(client, "query_export", { history: true, sql: "SELECT 1" });
    expect(r.isError).toBe(true);
    expect(r.text).toContain(catalogue);
    expect(r.text).toContain("Restore it from a backup");
  });
});

/** The harness's service settings, for the scope its servers use. */
function configEnv(): Record<string, string> {
  return {
    CRM_BASE_URL: h.sandbox.base_url,
    CRM_APPLICATION_ID: h.sandbox.application_id,
    CRM_SECRET_KEY: h.sandbox.secret_key,
  };
}
