import { readdir, readFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { zstdDecompressSync } from "node:zlib";
import type { DuckDBConnection } from "@duckdb/node-api";
import { parse } from "csv-parse/sync";
import {
  asyncBufferFromFile,
  type Compressors,
  type FileMetaData,
  parquetMetadataAsync,
  parquetReadObjects,
  type SchemaElement,
} from "hyparquet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type {
  EventsPartition,
  HistoryCatalogue,
  ScenarioPartition,
} from "../../src/history/catalogue.js";
import { loadDuckDb } from "../../src/query/engine.js";
import { configLedgerScope } from "../../src/runtime.js";
import type { SandboxCampaign } from "../../src/sandbox/world/types.js";
import { untilKept } from "../helpers/history-kept.js";
import { must } from "../helpers/must.js";
import { type Harness, startHarness } from "../helpers/tool-harness.js";

/**
 * The history as readers we did not write see it. A history is built through the server from
 * sandbox exports (campaigns of several channels, an A/B test, rounds in two months, a later
 * export of one day that replaces a partition's file, two scenarios); then:
 * - the statements docs/sync.md gives ("Reading the history"), taken from the Markdown as
 *   written with only the folder put in, run in DuckDB and answer what csv-parse counts in the
 *   downloaded CSVs (each round from the newest export holding it);
 * - every Parquet file is read by hyparquet: one schema per table in every file (names, order,
 *   physical and logical types: what Spark, Trino and BigQuery external tables need), the
 *   documented columns, folder names a hive reader parses back to the catalogue's IDs, row counts
 *   as the catalogue records them, and the rows themselves against the CSVs.
 */

const DOC = join(import.meta.dirname, "../../docs/sync.md");
/** The export's 13 columns (spec 2.4), then the job each row came from (docs/sync.md). */
const EVENT_COLUMNS = [
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
] as const;

const KST_MS = 9 * 3_600_000;
const kstDay = (ms: number) => new Date(ms + KST_MS).toISOString().slice(0, 10);

/** zstd as Node's zlib (libzstd) decodes it: hyparquet has no zstd of its own. */
const compressors: Compressors = {
  ZSTD: (input) => new Uint8Array(zstdDecompressSync(input)),
};

let h: Harness;
let duck: DuckDBConnection;
let closeDuck: () => void;
/** The data folder's `history` folder: what the docs call `$CRM_DATA_DIR/history`. */
let root: string;
let scope: string;
let catalogue: HistoryCatalogue;
/** Campaign exports in the order they were created (a later one wins a round). */
const exports: { jobId: string; campaignId: string; path: string }[] = [];
const scenarioJobs: { jobId: string; scenarioId: string; from: string; to: string }[] = [];

type CsvRecord = Record<(typeof EVENT_COLUMNS)[number], string>;
/** The kept rows of every campaign, by csv-parse: a round's rows from its newest export. */
let keptRows: (CsvRecord & { campaign_id: string })[];

async function startExport(
  args: Record<string, unknown>,
): Promise<{ jobId: string; path: string }> {
  const r = await h.call("start_export", { wait_seconds: 50, ...args });
  expect(r.isError, r.text).toBeFalsy();
  return {
    jobId: (r.structured.job as { _id: string })._id,
    path: must(r.structured.file_path as string | undefined, "file_path of a finished export"),
  };
}

function kept(jobId: string): Promise<void> {
  return untilKept((args) => h.call("check_export", args), jobId);
}

function campaignsToExport(campaigns: readonly SandboxCampaign[]): {
  twoMonths: SandboxCampaign;
  ab: SandboxCampaign;
  singles: SandboxCampaign[];
} {
  const normal = campaigns.filter((c) => c.role === "normal" && c.tasks.every((t) => t.aggregated));
  const month = (ms: number) => kstDay(ms).slice(0, 7);
  const twoMonths = must(
    normal.find((c) => {
      const [a, b] = c.tasks.slice(-2);
      return (
        !c.is_ab_test &&
        a !== undefined &&
        b !== undefined &&
        month(a.scheduled_at) !== month(b.scheduled_at)
      );
    }),
    "a campaign whose last two rounds are in two months",
  );
  const ab = must(
    normal.find((c) => c.is_ab_test && c.tasks.length === 1 && c.channel !== twoMonths.channel),
    "a one-round A/B campaign",
  );
  const singles: SandboxCampaign[] = [];
  for (const c of normal) {
    const used = [twoMonths, ab, ...singles].map((x) => x.channel);
    if (!c.is_ab_test && c.tasks.length === 1 && !used.includes(c.channel)) singles.push(c);
    if (singles.length === 2) break;
  }
  expect(singles).toHaveLength(2);
  return { twoMonths, ab, singles };
}

beforeAll(async () => {
  h = await startHarness({ env: { CRM_EXPORT_BUDGET: "20/600" } });
  scope = configLedgerScope(h.config);
  root = join(h.config.dataDir, "history");
  const { twoMonths, ab, singles } = campaignsToExport(h.sandbox.world.campaigns);
  const lastTwo = twoMonths.tasks.slice(-2).map((t) => kstDay(t.scheduled_at));
  const plan: { campaignId: string; args: Record<string, unknown> }[] = [
    { campaignId: twoMonths._id, args: { from: lastTwo[0], to: lastTwo[1] } },
    { campaignId: ab._id, args: {} },
    ...singles.map((c) => ({ campaignId: c._id, args: {} })),
    // The last day again: its partition's file is rewritten from the two exports.
    { campaignId: twoMonths._id, args: { from: lastTwo[1], to: lastTwo[1], force: true } },
  ];
  for (const { campaignId, args } of plan) {
    const done = await startExport({
      type: "campaign_event_data",
      campaign_id: campaignId,
      ...args,
    });
    exports.push({ ...done, campaignId });
    await kept(done.jobId);
  }
  for (const scenario of h.sandbox.world.scenarios.slice(0, 2)) {
    const window = { from: "2026-11-01", to: "2026-11-20" };
    const done = await startExport({
      type: "scenario_daily_metrics",
      scenario_id: scenario._id,
      ...window,
    });
    scenarioJobs.push({ jobId: done.jobId, scenarioId: scenario._id, ...window });
    await kept(done.jobId);
  }
  const history = must(await h.runtime.history.history(), "the history (on by default)");
  catalogue = await history.catalogue();
  keptRows = await keptCsvRows();
  const db = await (await loadDuckDb()).DuckDBInstance.create(":memory:");
  duck = await db.connect();
  closeDuck = () => {
    duck.closeSync();
    db.closeSync();
  };
}, 240_000);
afterAll(async () => {
  closeDuck?.();
  await h?.close();
});

/** Every CSV row, each round's rows taken from the last export (in creation order) holding it. */
async function keptCsvRows(): Promise<(CsvRecord & { campaign_id: string })[]> {
  const byRound = new Map<string, (CsvRecord & { campaign_id: string })[]>();
  for (const e of exports) {
    const records = parse(await readFile(e.path), { columns: true }) as CsvRecord[];
    const mine = new Map<string, (CsvRecord & { campaign_id: string })[]>();
    for (const r of records) {
      const key = JSON.stringify([e.campaignId, r.task_id, r.scheduled_at, r.group]);
      const list = mine.get(key) ?? [];
      list.push({ ...r, job_id: e.jobId, campaign_id: e.campaignId });
      mine.set(key, list);
    }
    for (const [key, list] of mine) byRound.set(key, list);
  }
  return [...byRound.values()].flat();
}

/** The section of docs/sync.md on reading the history. */
async function readingSection(): Promise<string> {
  const text = await readFile(DOC, "utf8");
  const start = text.indexOf("## Reading the history");
  expect(start).toBeGreaterThan(0);
  const end = text.indexOf("\n## ", start + 1);
  return text.slice(start, end < 0 ? undefined : end);
}

function codeBlocks(section: string, language: string): string[] {
  return [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)]
    .filter((m) => m[1] === language)
    .map((m) => m[2] as string);
}

/** The SQL of every `duckdb -c "…"` in the section's shell blocks, with the folder put in. */
async function cliStatements(): Promise<string[]> {
  const statements = codeBlocks(await readingSection(), "sh").flatMap((block) =>
    [...block.matchAll(/duckdb -c "([\s\S]*?)"/g)].map((m) => m[1] as string),
  );
  for (const s of statements) expect(s).toContain("$CRM_DATA_DIR/history/");
  return statements.map((s) => s.replaceAll("$CRM_DATA_DIR/history", root));
}

/** The columns of the docs' Trino table, with their types. */
async function trinoColumns(): Promise<[string, string][]> {
  const ddl = must(
    codeBlocks(await readingSection(), "sql").find((b) => b.includes("CREATE TABLE hive.")),
    "the docs' Trino table",
  );
  const body = ddl.slice(ddl.indexOf("(") + 1, ddl.indexOf(") WITH"));
  return body
    .split(",")
    .map((c) => c.trim().split(/\s+/))
    .map(([name, type]) => [(name as string).replaceAll('"', ""), type as string]);
}

/** The scenario_days columns the docs list ("Each `scenario_days` file holds …"). */
async function scenarioDayColumns(): Promise<string[]> {
  const section = (await readingSection()).replace(/\s+/g, " ");
  const start = section.indexOf("Each `scenario_days` file holds");
  const sentence = section.slice(start, section.indexOf("comes from the folder name", start));
  expect(start).toBeGreaterThan(0);
  return [...sentence.matchAll(/`([a-z_]+)`/g)]
    .map((m) => m[1] as string)
    .filter((name) => name !== "scenario_days" && name !== "scenario_id");
}

async function rowsOf(sql: string): Promise<unknown[][]> {
  const reader = await duck.runAndReadAll(sql);
  // As text: how a CLI prints them, and BIGINT and DOUBLE counts compare alike.
  return (reader.getRowsJson() as unknown[][]).map((row) => row.map(String));
}

function countBy<T>(items: readonly T[], key: (item: T) => string): Map<string, number> {
  const out = new Map<string, number>();
  for (const item of items) out.set(key(item), (out.get(key(item)) ?? 0) + 1);
  return out;
}

/** The Monday starting the week of a `YYYY-MM-DD HH:mm:ss` time, as DuckDB's date_trunc('week'). */
function weekOf(time: string): string {
  const day = new Date(`${time.slice(0, 10)}T00:00:00Z`);
  day.setUTCDate(day.getUTCDate() - ((day.getUTCDay() + 6) % 7));
  return `${day.toISOString().slice(0, 10)} 00:00:00`;
}

describe("the statements docs/sync.md gives, run as written", () => {
  it("DuckDB's CLI statement: events and sends per campaign and month", async () => {
    const [events, ...rest] = await cliStatements();
    const answer = await rowsOf(must(events, "the docs' DuckDB CLI statement on events"));
    const byPartition = new Map<string, { events: number; sent: number }>();
    for (const r of keptRows) {
      const key = JSON.stringify([r.campaign_id, r.scheduled_at.slice(0, 7)]);
      const counts = byPartition.get(key) ?? { events: 0, sent: 0 };
      counts.events += 1;
      if (r.event_type === "message_sent") counts.sent += 1;
      byPartition.set(key, counts);
    }
    const expected = [...byPartition]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([key, c]) => [...(JSON.parse(key) as string[]), String(c.events), String(c.sent)]);
    expect(answer).toEqual(expected);
    expect(new Set(expected.map((r) => r[0])).size).toBe(4);
    expect(expected.length).toBeGreaterThanOrEqual(5);
    expect(rest.length).toBeGreaterThanOrEqual(1);
  });

  it("DuckDB's CLI statement on scenario_days: days and sends per scenario", async () => {
    const statement = must(
      (await cliStatements()).find((s) => s.includes("/scenario_days/")),
      "the docs' DuckDB CLI statement on scenario_days",
    );
    const answer = await rowsOf(statement);
    const expected = scenarioJobs
      .map((job) => {
        const scenario = must(h.sandbox.world.scenario(job.scenarioId), "the exported scenario");
        const report = h.sandbox.world.scenarioReport(scenario, job.from, job.to);
        const days = report.flatMap((n) => n.days);
        const sends = days.reduce((sum, d) => sum + d.metrics["발송 수(건)"], 0);
        return [job.scenarioId, String(days.length), String(sends)];
      })
      .sort((a, b) => ((a[0] as string) < (b[0] as string) ? -1 : 1));
    expect(answer).toEqual(expected);
  });

  it("the duckdb-Python statement: events per campaign and week", async () => {
    const python = codeBlocks(await readingSection(), "python").join("\n");
    const sql = must(/con\.sql\(f"""([\s\S]*?)"""\)/.exec(python)?.[1], "the duckdb-Python SQL");
    expect(python).toMatch(/root = "[^"]+"\s+# CRM_DATA_DIR\/history/);
    const answer = await rowsOf(sql.replaceAll("{root}", root));
    const counts = countBy(keptRows, (r) =>
      JSON.stringify([r.campaign_id, weekOf(r.scheduled_at)]),
    );
    const expected = [...counts]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([key, n]) => [...(JSON.parse(key) as string[]), String(n)]);
    expect(answer).toEqual(expected);
  });
});

/** Files under the history folder, relative to it, `/`-separated. */
async function filesUnder(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(folder, join(e.parentPath, e.name)).split(sep).join("/"))
    .sort();
}

/** A hive folder value as Spark and Hive decode it: each %XX one character. */
function hiveUnescape(value: string): string {
  return value.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) =>
    String.fromCharCode(Number.parseInt(hex, 16)),
  );
}

/** `key=value` folders between the dataset folder and the file, decoded. */
function partitionKeys(file: string): [string, string][] {
  const parts = file.split("/").slice(1, -1);
  return parts.map((part) => {
    const m = /^([a-z_]+)=([A-Za-z0-9_%-]+)$/.exec(part);
    if (m === null) throw new Error(`${file}: folder ${part} is not key=value of safe characters`);
    const value = m[2] as string;
    // Spark and Hive decode byte by byte, DuckDB, pyarrow and polars as UTF-8: both agree here.
    expect(hiveUnescape(value)).toBe(decodeURIComponent(value));
    return [m[1] as string, hiveUnescape(value)];
  });
}

/** What a reader's schema inference sees of a column: physical and logical type, repetition. */
function columnType(e: SchemaElement): string {
  return JSON.stringify([
    e.name,
    e.type,
    e.repetition_type,
    e.converted_type ?? null,
    e.logical_type ?? null,
  ]);
}

async function metadataOf(file: string): Promise<FileMetaData> {
  return parquetMetadataAsync(await asyncBufferFromFile(join(root, scope, file)));
}

async function rowsOfFile(file: string): Promise<Record<string, unknown>[]> {
  return parquetReadObjects({
    file: await asyncBufferFromFile(join(root, scope, file)),
    compressors,
  });
}

/** The time a TIMESTAMP (not adjusted to UTC) holds, as the CSV writes it. */
function wallTime(value: unknown): string {
  expect(value).toBeInstanceOf(Date);
  return (value as Date).toISOString().slice(0, 19).replace("T", " ");
}

describe("every Parquet file, read by hyparquet", () => {
  const events = () =>
    catalogue.partitions.filter((p): p is EventsPartition => p.dataset === "events");
  const scenarios = () =>
    catalogue.partitions.filter((p): p is ScenarioPartition => p.dataset === "scenario_days");

  it("the folder holds the catalogue's files and no other", async () => {
    const onDisk = (await filesUnder(join(root, scope))).filter((f) => f.endsWith(".parquet"));
    const named = catalogue.partitions
      .flatMap((p) => [p.file, ...(p.dataset === "events" && p.messages ? [p.messages.file] : [])])
      .sort();
    expect(onDisk).toEqual(named);
    expect(onDisk.filter((f) => f.startsWith("events/")).length).toBeGreaterThanOrEqual(5);
    expect(onDisk.filter((f) => f.startsWith("messages/")).length).toBe(events().length);
    expect(onDisk.filter((f) => f.startsWith("scenario_days/")).length).toBe(2);
  });

  it("folder names parse as key=value back to the catalogue's IDs and months", () => {
    for (const p of events()) {
      const expected = [
        ["campaign_id", p.campaign_id],
        ["round_month", p.round_month],
      ];
      expect(partitionKeys(p.file)).toEqual(expected);
      expect(partitionKeys(must(p.messages, "the messages file").file)).toEqual(expected);
      expect(p.round_month).toMatch(/^\d{4}-\d{2}$/);
    }
    for (const p of scenarios())
      expect(partitionKeys(p.file)).toEqual([["scenario_id", p.scenario_id]]);
  });

  it("all files of a table have one schema, the documented columns, and no partition key", async () => {
    const tables = new Map<string, string[]>();
    for (const p of catalogue.partitions) {
      const files =
        p.dataset === "events"
          ? [
              ["events", p.file],
              ["messages", must(p.messages, "messages").file],
            ]
          : [["scenario_days", p.file]];
      for (const [table, file] of files as [string, string][]) {
        const schema = (await metadataOf(file)).schema.slice(1);
        expect(schema.every((e) => e.num_children === undefined)).toBe(true);
        const list = tables.get(table) ?? [];
        list.push(JSON.stringify(schema.map(columnType)));
        tables.set(table, list);
      }
    }
    for (const [table, schemas] of tables) {
      expect(new Set(schemas).size, `${table}: one schema in all ${schemas.length} files`).toBe(1);
    }
    const schemaOf = (table: string) =>
      (JSON.parse(must(tables.get(table)?.[0], table)) as string[]).map(
        (c) =>
          JSON.parse(c) as [
            string,
            string,
            string,
            string | null,
            { type: string; [k: string]: unknown } | null,
          ],
      );
    // The type a reader infers from: the logical type, else the legacy converted type.
    const typed = (table: string) =>
      schemaOf(table).map(([name, physical, , converted, logical]) => [
        name,
        physical,
        logical?.type ?? converted,
      ]);
    const eventsSchema = schemaOf("events");
    // The Trino table of the docs: the files' columns in order, varchar for text, timestamps.
    const trino = await trinoColumns();
    expect(trino.slice(-2)).toEqual([
      ["campaign_id", "varchar"],
      ["round_month", "varchar"],
    ]);
    const asTrino = { UTF8: "varchar", JSON: "varchar", TIMESTAMP: "timestamp" } as const;
    expect(
      typed("events").map(([name, , t]) => [name, asTrino[t as keyof typeof asTrino] ?? t]),
    ).toEqual(trino.slice(0, -2));
    for (const [name, physical, , , logical] of eventsSchema) {
      if (name === "scheduled_at" || name === "captured_at") {
        // Wall-clock times with no zone (Spark's TIMESTAMP_NTZ, BigQuery's DATETIME).
        expect([physical, logical]).toEqual([
          "INT64",
          { type: "TIMESTAMP", isAdjustedToUTC: false, unit: "MICROS" },
        ]);
      } else expect(physical).toBe("BYTE_ARRAY");
    }
    const messages = schemaOf("messages");
    const flag = (name: string) => [name, "BOOLEAN", null];
    expect(typed("messages")).toEqual([
      ["task_id", "BYTE_ARRAY", "UTF8"],
      ["scheduled_at", "INT64", "TIMESTAMP"],
      ["group", "BYTE_ARRAY", "UTF8"],
      ["job_id", "BYTE_ARRAY", "UTF8"],
      ["user_key", "INT64", "UINT_64"],
      ["channel", "BYTE_ARRAY", "UTF8"],
      flag("sent"),
      ["received_at", "INT64", "TIMESTAMP"],
      ...["failed", "control", "opened", "clicked", "converted"].map(flag),
    ]);
    const days = schemaOf("scenario_days");
    const documented = await scenarioDayColumns();
    const scenarioTypes: Record<string, [string, string | null]> = {
      job_id: ["BYTE_ARRAY", "UTF8"],
      number: ["INT32", "INT_32"],
      channel: ["BYTE_ARRAY", "UTF8"],
      branch: ["BYTE_ARRAY", "UTF8"],
      node_id: ["BYTE_ARRAY", "UTF8"],
      date: ["INT32", "DATE"],
    };
    expect(typed("scenario_days")).toEqual(
      documented.map((name) => [name, ...(scenarioTypes[name] ?? ["DOUBLE", null])]),
    );
    for (const schema of [eventsSchema, messages, days]) {
      const names = schema.map((c) => c[0]);
      for (const key of ["campaign_id", "round_month", "scenario_id"])
        expect(names).not.toContain(key);
    }
  });

  it("events rows: counts as the catalogue records them, the CSVs' rows, wall-clock times", async () => {
    const fromParquet: Record<string, unknown>[] = [];
    for (const p of events()) {
      const metadata = await metadataOf(p.file);
      expect(Number(metadata.num_rows)).toBe(p.rows);
      const rows = await rowsOfFile(p.file);
      expect(rows).toHaveLength(p.rows);
      const perRound = countBy(rows, (r) =>
        JSON.stringify([r.task_id, wallTime(r.scheduled_at), r.group, r.job_id]),
      );
      const recorded = new Map(
        p.rounds.map((r) => [
          JSON.stringify([r.task_id, r.scheduled_at, r.group, r.job_id]),
          r.rows,
        ]),
      );
      expect(perRound).toEqual(recorded);
      for (const r of rows) {
        expect(wallTime(r.scheduled_at).slice(0, 7)).toBe(p.round_month);
        fromParquet.push({ ...r, campaign_id: p.campaign_id });
      }
    }
    // Every field as csv-parse read it (an empty field is NULL), times in the file's own text,
    // JSON columns as the values they hold (hyparquet parses them).
    const json = new Set<string>(EVENT_COLUMNS.filter((c) => c.endsWith("properties")));
    const parquetText = (c: string, v: unknown) =>
      v === null || v === undefined
        ? ""
        : v instanceof Date
          ? wallTime(v)
          : json.has(c)
            ? JSON.stringify(v)
            : String(v);
    const csvText = (c: string, v: string) =>
      json.has(c) && v !== "" ? JSON.stringify(JSON.parse(v)) : v;
    const columns = ["campaign_id", ...EVENT_COLUMNS];
    const sorted = (rows: Record<string, unknown>[], text: (c: string, v: never) => string) =>
      rows.map((r) => JSON.stringify(columns.map((c) => text(c, r[c] as never)))).sort();
    expect(sorted(fromParquet, parquetText)).toEqual(sorted(keptRows, csvText));
  });

  it("messages rows: counts as the catalogue records them, booleans and times typed", async () => {
    for (const p of events()) {
      const m = must(p.messages, "the messages file");
      expect(Number((await metadataOf(m.file)).num_rows)).toBe(m.rows);
      const rows = await rowsOfFile(m.file);
      expect(rows).toHaveLength(m.rows);
      for (const r of rows) {
        for (const flag of ["sent", "failed", "control", "opened", "clicked", "converted"]) {
          expect(typeof r[flag]).toBe("boolean");
        }
        expect(wallTime(r.scheduled_at).slice(0, 7)).toBe(p.round_month);
        expect(r.received_at === null || r.received_at instanceof Date).toBe(true);
      }
      // Both kinds are there: a message received (a timestamp) and one not (null).
      expect(rows.some((r) => r.received_at instanceof Date)).toBe(true);
      // One row per user and round: the events file's users, counted from its rows by us.
      const users = new Set(
        (await rowsOfFile(p.file))
          .filter((r) => r.platform_user_id !== null || r.user_id !== null)
          .map((r) =>
            JSON.stringify([
              r.task_id,
              wallTime(r.scheduled_at),
              r.group,
              r.job_id,
              r.platform_user_id ?? r.user_id,
            ]),
          ),
      );
      expect(rows).toHaveLength(users.size);
    }
  });

  it("scenario_days rows: counts as the catalogue records them, one row per node and day", async () => {
    for (const p of scenarios()) {
      expect(Number((await metadataOf(p.file)).num_rows)).toBe(p.rows);
      const rows = await rowsOfFile(p.file);
      expect(rows).toHaveLength(p.rows);
      const job = must(
        scenarioJobs.find((j) => j.scenarioId === p.scenario_id),
        "the scenario's export",
      );
      const scenario = must(h.sandbox.world.scenario(p.scenario_id), "the scenario");
      const report = h.sandbox.world.scenarioReport(scenario, job.from, job.to);
      const expected = report
        .flatMap((n) => n.days.map((d) => JSON.stringify([n.node.node_id, d.date])))
        .sort();
      const dates = rows.map((r) => {
        expect(r.date).toBeInstanceOf(Date);
        expect(r.job_id).toBe(job.jobId);
        return JSON.stringify([r.node_id, (r.date as Date).toISOString().slice(0, 10)]);
      });
      expect(dates.sort()).toEqual(expected);
    }
  });
});
