import { copyFile, mkdtemp, readdir, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withHistoryLock } from "../../../src/history/commit.js";
import { jobRows } from "../../../src/history/job-files.js";
import { type KeptRowsLookup, queryFiles } from "../../../src/query/index.js";
import type { SandboxCampaign } from "../../../src/sandbox/world/types.js";
import { historyRows, withHistoryRows } from "../../../src/tools/query-export/history-rows.js";
import { untilKept } from "../../helpers/history-kept.js";
import { must } from "../../helpers/must.js";
import {
  type Harness,
  startHarness,
  type ToolResult,
  toResult,
} from "../../helpers/tool-harness.js";

/**
 * query_export on an export the history holds whole reads the history's Parquet instead of the
 * CSV, through the SDK client on sandbox exports: the same answers (columns, types, rows) as the
 * CSV itself and as the server with CRM_HISTORY=off, and no Parquet copy of the export made. An
 * export with a round replaced by a newer one, a server with CRM_HISTORY=off, an export whose
 * history files are gone (before or during the read) and one still being added are read from
 * the file. Which one was read shows in the call's progress ("from its copy in the history of
 * exports") and in the query cache (a copy made or not).
 */

let h: Harness;
let campaign: SandboxCampaign;
let wholeJob: string;
let wholeFile: string;
/** The whole export's CSV copied outside exports/: read as CSV by every query. */
let csvCopy: string;
let readDir: string;

const KST_MS = 9 * 3_600_000;
const kstDay = (ms: number) => new Date(ms + KST_MS).toISOString().slice(0, 10);
const FROM_HISTORY = "from its copy in the history of exports";

interface Asked {
  result: ToolResult;
  progress: string[];
}

async function ask(client: Client, args: Record<string, unknown>): Promise<Asked> {
  const progress: string[] = [];
  const raw = await client.callTool(
    { name: "query_export", arguments: args },
    { onprogress: (p: { message?: string }) => progress.push(String(p.message)) },
  );
  const result = toResult(raw);
  expect(result.isError, result.text).toBeFalsy();
  return { result, progress };
}

/** Columns and rows: what two paths must agree on. */
function answerOf(asked: Asked): { columns: unknown; rows: unknown } {
  return { columns: asked.result.structured.columns, rows: asked.result.structured.rows };
}

async function exported(args: Record<string, unknown>): Promise<{ job: string; file: string }> {
  const r = await h.call("start_export", {
    type: "campaign_event_data",
    wait_seconds: 50,
    ...args,
  });
  expect(r.isError, r.text).toBeFalsy();
  const file = must(r.structured.file_path as string | undefined, "file_path of a finished export");
  return { job: (r.structured.job as { _id: string })._id, file };
}

function kept(jobId: string): Promise<void> {
  return untilKept((args) => h.call("check_export", args), jobId);
}

/** The Parquet copies of exports the query cache holds, by the export's file name. */
async function cachedCopies(): Promise<string[]> {
  const names = await readdir(join(h.dataDir, "query-cache")).catch(() => [] as string[]);
  return names.filter((n) => n.endsWith(".parquet"));
}

const isCopyOf = (file: string) => (name: string) => name.startsWith(`${basename(file)}.`);

/** Questions a model asks of one export, every column type among their answers. */
const QUESTIONS = [
  "SELECT count(*) AS n, count(DISTINCT coalesce(platform_user_id, user_id)) AS users FROM events",
  "SELECT event_type, event_role, count(DISTINCT user_id) AS users FROM events GROUP BY ALL ORDER BY ALL",
  `SELECT task_id, scheduled_at, "group", event_type, channel, error_code, error_message, event_role,
     count(*) AS n, min(captured_at) AS first_at, max(user_id) AS last_user,
     max(platform_user_id) AS last_platform_user, max(event_properties) AS props,
     max(custom_event_properties) AS custom, max(internal_event_properties) AS internal,
     sum(TRY_CAST(event_properties->>'amount' AS DOUBLE)) AS amount
   FROM events GROUP BY ALL ORDER BY ALL`,
  "SELECT hour(captured_at) AS hour, count(*) AS opens FROM events WHERE event_role = 'open' GROUP BY 1 ORDER BY 1",
];

beforeAll(async () => {
  readDir = await mkdtemp(join(tmpdir(), "crm-history-rows-read-"));
  h = await startHarness({ env: { CRM_EXPORT_BUDGET: "20/600", CRM_READ_DIRS: readDir } });
  campaign = must(
    h.sandbox.world.campaigns.find(
      (c) =>
        c.role === "normal" &&
        c.tasks.length >= 3 &&
        c.tasks.length <= 12 &&
        c.tasks.every((t) => t.aggregated),
    ),
    "a campaign of a few rounds, all aggregated",
  );
  ({ job: wholeJob, file: wholeFile } = await exported({ campaign_id: campaign._id }));
  await kept(wholeJob);
  csvCopy = join(readDir, "whole-export.csv");
  await copyFile(wholeFile, csvCopy);
}, 180_000);
afterAll(async () => {
  await h?.close();
  await rm(readDir, { recursive: true, force: true });
});

describe("query_export on an export the history holds whole", () => {
  it("reads the history's copy, answers as the CSV does, and makes no copy of its own", async () => {
    const fromHistory: Asked[] = [];
    for (const sql of QUESTIONS)
      fromHistory.push(await ask(h.client, { job_ids: [wholeJob], sql }));
    for (const asked of fromHistory) {
      expect(
        asked.progress.some((m) => m.includes(FROM_HISTORY)),
        asked.progress.join("\n"),
      ).toBe(true);
    }
    // Reading the history instead of the CSV, the export needs no Parquet copy of its own.
    expect((await cachedCopies()).filter(isCopyOf(wholeFile))).toEqual([]);

    for (const [i, sql] of QUESTIONS.entries()) {
      const csv = await ask(h.client, { files: [csvCopy], sql });
      expect(csv.progress.some((m) => m.includes(FROM_HISTORY))).toBe(false);
      expect(answerOf(fromHistory[i] as Asked), sql).toEqual(answerOf(csv));
    }
    const all = answerOf(fromHistory[2] as Asked);
    expect(all.columns).toEqual([
      { name: "task_id", type: "VARCHAR" },
      { name: "scheduled_at", type: "TIMESTAMP" },
      { name: "group", type: "VARCHAR" },
      { name: "event_type", type: "VARCHAR" },
      { name: "channel", type: "VARCHAR" },
      { name: "error_code", type: "VARCHAR" },
      { name: "error_message", type: "VARCHAR" },
      { name: "event_role", type: "VARCHAR" },
      { name: "n", type: "BIGINT" },
      { name: "first_at", type: "TIMESTAMP" },
      { name: "last_user", type: "VARCHAR" },
      { name: "last_platform_user", type: "VARCHAR" },
      { name: "props", type: "JSON" },
      { name: "custom", type: "JSON" },
      { name: "internal", type: "JSON" },
      { name: "amount", type: "DOUBLE" },
    ]);
    expect((all.rows as unknown[]).length).toBeGreaterThanOrEqual(campaign.tasks.length);
  });

  it("gives job_id and answers as the server with CRM_HISTORY=off does", async () => {
    const off = await h.restart({ CRM_HISTORY: "off" });
    for (const sql of [
      ...QUESTIONS,
      "SELECT job_id, count(*) AS n FROM events GROUP BY 1",
      "SELECT * FROM events ORDER BY ALL LIMIT 50",
    ]) {
      const on = await ask(h.client, { job_ids: [wholeJob], sql, max_rows: 1000 });
      const without = await ask(off, { job_ids: [wholeJob], sql, max_rows: 1000 });
      expect(on.progress.some((m) => m.includes(FROM_HISTORY))).toBe(true);
      expect(without.progress.some((m) => m.includes(FROM_HISTORY))).toBe(false);
      expect(answerOf(on), sql).toEqual(answerOf(without));
    }
    const [[job, n]] = (await ask(h.client, {
      job_ids: [wholeJob],
      sql: "SELECT job_id, count(*) FROM events GROUP BY 1",
    }).then((a) => a.result.structured.rows)) as [[string, number]];
    expect(job).toBe(wholeJob);
    expect(n).toBeGreaterThan(0);
    // The server without a history read the file, through the Parquet copy it made of it.
    expect((await cachedCopies()).filter(isCopyOf(wholeFile))).toHaveLength(1);
  });

  it("describes the export from the history's copy as from the file", async () => {
    const on = await ask(h.client, { job_ids: [wholeJob] });
    const off = await ask(await h.restart({ CRM_HISTORY: "off" }), { job_ids: [wholeJob] });
    expect(on.progress.some((m) => m.includes(FROM_HISTORY))).toBe(true);
    expect(on.result.structured.description).toEqual(off.result.structured.description);
  });

  it("an export whose history files are gone is read from its file", async () => {
    const history = must(await h.runtime.history.history(), "the history");
    const rows = must(await jobRows(history, wholeJob), "the export's rows in the history");
    const sql = QUESTIONS[2] as string;
    const before = await ask(h.client, { job_ids: [wholeJob], sql });
    expect(before.progress.some((m) => m.includes(FROM_HISTORY))).toBe(true);
    const moved = rows.files.map((f) => `${f}.away`);
    for (const [i, f] of rows.files.entries()) await rename(f, moved[i] as string);
    try {
      const after = await ask(h.client, { job_ids: [wholeJob], sql });
      expect(after.progress.some((m) => m.includes(FROM_HISTORY))).toBe(false);
      expect(answerOf(after)).toEqual(answerOf(before));
    } finally {
      for (const [i, f] of rows.files.entries()) await rename(moved[i] as string, f);
    }
  });

  it("a history file replaced while a question reads it: asked again of the export's file", async () => {
    const history = must(await h.runtime.history.history(), "the history");
    const sql = QUESTIONS[2] as string;
    const asked = (keptRows?: KeptRowsLookup) =>
      queryFiles({
        sql,
        files: [{ path: csvCopy, jobId: wholeJob }],
        limits: h.config.query,
        maxRows: 1000,
        ...(keptRows === undefined ? {} : { keptRows }),
      });
    const csv = await asked();
    const moved: string[] = [];
    const kept = historyRows(async () => history);
    const lookups: boolean[] = [];
    try {
      const result = await withHistoryRows(kept, (lookup) => {
        lookups.push(lookup !== undefined);
        if (lookup === undefined) return asked();
        // Another process's commit replaces the files between the catalogue's read and DuckDB's.
        return asked(async (source) => {
          const rows = await lookup(source);
          if (rows === undefined || rows === "coming") return rows;
          for (const f of rows.paths) await rename(f, `${f}.away`);
          moved.push(...rows.paths);
          return rows;
        });
      });
      expect(lookups).toEqual([true, false]);
      expect(moved.length).toBeGreaterThan(0);
      expect(result).toEqual(csv);
      expect(csv.row_count).toBeGreaterThan(0);
    } finally {
      for (const f of moved) await rename(`${f}.away`, f);
    }
  });

  it("an export still being added is read from its file, with no copy of its own begun", async () => {
    const other = must(
      h.sandbox.world.campaigns.find(
        (c) => c.role === "normal" && c !== campaign && c.tasks.length === 1,
      ),
      "a one-round campaign",
    );
    const history = must(await h.runtime.history.history(), "the history");
    // The history's lock held here keeps the export's addition from committing: it stays
    // "adding" while the question is asked.
    let release = () => {};
    const releasing = new Promise<void>((resolve) => {
      release = resolve;
    });
    let holding: Promise<void> = Promise.resolve();
    await new Promise<void>((taken) => {
      holding = withHistoryLock(history.folder, async () => {
        taken();
        await releasing;
      });
    });
    let job: { job: string; file: string };
    try {
      job = await exported({ campaign_id: other._id });
      const status = await h.call("check_export", { job_id: job.job, wait_seconds: 0 });
      expect(status.structured.history).toMatchObject({ status: "adding" });
      const sql = QUESTIONS[1] as string;
      const asked = await ask(h.client, { job_ids: [job.job], sql });
      expect(asked.progress.some((m) => m.includes(FROM_HISTORY))).toBe(false);
      expect((asked.result.structured.rows as unknown[]).length).toBeGreaterThan(0);
      // A small export is copied before its first question, unless the history is adding it.
      expect((await cachedCopies()).filter(isCopyOf(job.file))).toEqual([]);
    } finally {
      release();
      await holding;
    }
    await kept(job.job);
    const next = await ask(h.client, { job_ids: [job.job], sql: QUESTIONS[1] as string });
    expect(next.progress.some((m) => m.includes(FROM_HISTORY))).toBe(true);
    expect((await cachedCopies()).filter(isCopyOf(job.file))).toEqual([]);
  });

  it("an export with a round kept from a newer export is read from its own file", async () => {
    const last = kstDay(must(campaign.tasks.at(-1), "the last round").scheduled_at);
    const lastDay = await exported({
      campaign_id: campaign._id,
      from: last,
      to: last,
      force: true,
    });
    await kept(lastDay.job);
    const history = must(await h.runtime.history.history(), "the history");
    expect(await jobRows(history, wholeJob)).toMatchObject({ complete: false });

    for (const name of (await cachedCopies()).filter(isCopyOf(wholeFile))) {
      await rm(join(h.dataDir, "query-cache", name));
    }
    const sql = QUESTIONS[1] as string;
    const whole = await ask(h.client, { job_ids: [wholeJob], sql });
    expect(whole.progress.some((m) => m.includes(FROM_HISTORY))).toBe(false);
    expect(answerOf(whole)).toEqual(answerOf(await ask(h.client, { files: [csvCopy], sql })));
    // Read from the file as before: its Parquet copy is made again.
    expect((await cachedCopies()).filter(isCopyOf(wholeFile))).toHaveLength(1);

    // The newer export holds every row of its own file, so it is read from the history.
    const newer = await ask(h.client, { job_ids: [lastDay.job], sql });
    expect(newer.progress.some((m) => m.includes(FROM_HISTORY))).toBe(true);
    expect((await cachedCopies()).filter(isCopyOf(lastDay.file))).toEqual([]);
  });
});
