import { execFile } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { historyFolder, hiveValue } from "../../src/history/layout.js";
import { loadDuckDb } from "../../src/query/engine.js";
import { csvReadSql } from "../../src/query/events-view.js";
import { startSandbox } from "../../src/sandbox/index.js";
import type { RunningSandbox } from "../../src/sandbox/types.js";
import type { SandboxCampaign } from "../../src/sandbox/world/types.js";
import { untilKept } from "../helpers/history-kept.js";
import { must } from "../helpers/must.js";
import { needs } from "../helpers/needs.js";
import { startTestPostgres, type TestPostgres } from "../helpers/postgres.js";
import { sandboxDay } from "../helpers/sandbox-day.js";
import {
  BUILT_BIN,
  type ServerProcess,
  sandboxServerEnv,
  spawnHttpServer,
} from "../helpers/serve-http.js";
import { type ToolResult, toResult } from "../helpers/tool-harness.js";
import { waitUntil } from "../helpers/wait-until.js";

/**
 * The history in team mode, through real processes: two `serve --http` processes of the built
 * bin on one data folder and one PostgreSQL database, and `sync` run beside them as a scheduled
 * job would. One export both processes download at once is added once (one catalogue record, each
 * round once, one Parquet file per partition); either process answers the same history questions;
 * what sync adds, both see.
 */
const TOKENS = { alice: "alice-0123456789abcdef0123", bob: "bob-0123456789abcdef012345" } as const;
const run = promisify(execFile);
const DAY_MS = 86_400_000;
const KST_MS = 9 * 3_600_000;

/** One send round and its rows, as every reader below states it. */
type RoundCount = [task: string, scheduledAt: string, group: string, rows: number];

let db: TestPostgres;
let sandbox: RunningSandbox;
let dataDir: string;
const processes: ServerProcess[] = [];
const clients: Client[] = [];
let servers: [ServerProcess, ServerProcess];
let conns: [Client, Client];

/** Exported by both processes at once. */
let exported: SandboxCampaign;
/** Added by sync. */
let synced: SandboxCampaign;
let jobId: string;
let filePath: string;
let fetched: { created: number; downloaded: number };

function serviceEnv(): Record<string, string> {
  return {
    ...sandboxServerEnv(sandbox, dataDir),
    CRM_DATABASE_URL: db.url,
  };
}

async function spawnServer(): Promise<ServerProcess> {
  const server = await spawnHttpServer({
    ...serviceEnv(),
    // Each process says which export it added: the proof that only one of them did.
    CRM_LOG_LEVEL: "info",
    CRM_HTTP_TOKENS: Object.entries(TOKENS)
      .map(([name, token]) => `${name}:${token}`)
      .join(","),
  });
  processes.push(server);
  return server;
}

async function connect(server: ServerProcess, user: keyof typeof TOKENS): Promise<Client> {
  const client = new Client({ name: `team-history-${user}`, version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: { Authorization: `Bearer ${TOKENS[user]}` } },
    }),
  );
  clients.push(client);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>) {
  return toResult(await client.callTool({ name, arguments: args }));
}

function rowsOf(r: ToolResult): unknown[][] {
  expect(r.isError, r.text).toBeFalsy();
  return r.structured.rows as unknown[][];
}

function roundCounts(rows: readonly unknown[][]): RoundCount[] {
  return rows.map(([task, at, group, n]) => [String(task), String(at), String(group), Number(n)]);
}

/** Per round of `from` (`history` or `events`): task, time, group, rows, in order. */
function perRoundSql(from: string, where: string): string {
  return `SELECT coalesce(task_id, '') AS task, strftime(scheduled_at, '%Y-%m-%d %H:%M:%S') AS at, coalesce("group", '') AS grp, count(*) AS n FROM ${from} ${where} GROUP BY ALL ORDER BY ALL`;
}

/** DuckDB's own reading of the downloaded CSV, in this process, apart from any server. */
async function duckDbPerRound(path: string): Promise<RoundCount[]> {
  const duck = await loadDuckDb();
  const instance = await duck.DuckDBInstance.create(":memory:");
  const connection = await instance.connect();
  try {
    const reader = await connection.runAndReadAll(perRoundSql(csvReadSql([path]), ""));
    return roundCounts(reader.getRows() as unknown[][]);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

async function withPg<T>(work: (pool: import("pg").Pool) => Promise<T>): Promise<T> {
  const { default: pg } = await import("pg");
  const pool = new pg.Pool({ connectionString: db.url, max: 1 });
  try {
    return await work(pool);
  } finally {
    await pool.end();
  }
}

/** The history's one scope: the ledger's, the same for both processes. */
async function historyScope(): Promise<string> {
  const scopes = await withPg((pool) =>
    pool.query<{ scope: string }>("SELECT scope FROM crm_history_catalogue"),
  );
  expect(scopes.rows).toHaveLength(1);
  return must(scopes.rows[0], "the history catalogue's scope").scope;
}

async function filesUnder(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

function keptBy(client: Client, job: string): Promise<void> {
  return untilKept((args) => call(client, "check_export", args), job, {
    timeoutMs: 120_000,
    intervalMs: 250,
  });
}

/** The servers' warnings about the history: an export not added, a catch-up failed. */
function historyWarnings(): string[] {
  return processes.flatMap((p) =>
    p
      .stderr()
      .split("\n")
      .filter((l) => /\] (warn|error): history/.test(l)),
  );
}

function byText(a: readonly unknown[], b: readonly unknown[]): number {
  const [x, y] = [JSON.stringify(a), JSON.stringify(b)];
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The sandbox's midnight (Asia/Seoul) that begins the day of its clock. */
function sandboxMidnight(): number {
  return Math.floor((sandbox.world.now + KST_MS) / DAY_MS) * DAY_MS - KST_MS;
}

describe("team mode: one history for every process", needs("postgresql"), () => {
  beforeAll(async () => {
    [db, sandbox] = await Promise.all([startTestPostgres(), startSandbox({ jobSeconds: 2 })]);
    dataDir = await mkdtemp(join(tmpdir(), "crm-team-history-"));
    const normal = sandbox.world.campaigns.filter((c) => c.role === "normal");
    // A few rounds over several months, all aggregated: more than one partition to keep once.
    exported = must(
      normal.find(
        (c) =>
          c.tasks.length >= 3 &&
          c.tasks.length <= 12 &&
          c.tasks.every((t) => t.aggregated) &&
          spanDays(c) > 31,
      ),
      "a campaign of a few rounds over more than a month, all aggregated",
    );
    synced = must(
      normal
        .filter((c) => c !== exported && !c.is_ab_test && roundsToSync(c) > 0)
        .sort((a, b) => recordsOf(a) - recordsOf(b))[0],
      "a small campaign with rounds in sync's window",
    );

    servers = [await spawnServer(), await spawnServer()];
    conns = [await connect(servers[0], "alice"), await connect(servers[1], "bob")];
    const before = { ...sandbox.faults.requestCounts };
    const request = { type: "campaign_event_data", campaign_id: exported._id };
    const started = await Promise.all(
      conns.map((c) => call(c, "start_export", { ...request, wait_seconds: 0 })),
    );
    const ids = started.map((r) => {
      expect(r.isError, r.text).toBeFalsy();
      return (r.structured.job as { _id: string })._id;
    });
    expect(ids[1]).toBe(ids[0]);
    jobId = must(ids[0], "the export's job");
    const checked = await Promise.all(
      conns.map((c) => call(c, "check_export", { job_id: jobId, wait_seconds: 50 })),
    );
    const paths = checked.map((r) => {
      expect(r.isError, r.text).toBeFalsy();
      return must(r.structured.file_path as string | undefined, "file_path of a finished export");
    });
    expect(paths[1]).toBe(paths[0]);
    filePath = must(paths[0], "the export's file");
    fetched = {
      created: sandbox.faults.requestCounts.create_export_job - before.create_export_job,
      downloaded: sandbox.faults.requestCounts.download - before.download,
    };
    await Promise.all(conns.map((c) => keptBy(c, jobId)));
  }, 240_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    for (const p of processes) p.child.kill("SIGKILL");
    await Promise.all([db?.stop(), sandbox?.close()]);
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  /** Rounds of `c` sync finds in its window (the 30 days up to the sandbox's today). */
  function roundsToSync(c: SandboxCampaign): number {
    const from = sandboxMidnight() - 29 * DAY_MS;
    return c.tasks.filter((t) => t.scheduled_at >= from && t.aggregated).length;
  }

  function spanDays(c: SandboxCampaign): number {
    const first = must(c.tasks[0], "a first round").scheduled_at;
    return (must(c.tasks.at(-1), "a last round").scheduled_at - first) / DAY_MS;
  }

  function recordsOf(c: SandboxCampaign): number {
    return c.tasks.reduce((n, t) => n + t.rounds.reduce((m, r) => m + r.records, 0), 0);
  }

  it("one job downloaded by both processes at once is created, downloaded and added once", async () => {
    expect(fetched).toEqual({ created: 1, downloaded: 1 });
    const added = () =>
      servers.map(
        (s) =>
          s
            .stderr()
            .split("\n")
            .filter((l) => l.includes("history: export added") && l.includes(jobId)).length,
      );
    await waitUntil(() => added().some((n) => n > 0), "a process to log the export added");
    expect(added().sort()).toEqual([0, 1]);
    expect(historyWarnings()).toEqual([]);

    const { exportsOfJob, rounds, partitions } = await withPg(async (pool) => ({
      exportsOfJob: await pool.query<{ n: string }>(
        "SELECT count(*) AS n FROM crm_history_exports WHERE job_id = $1",
        [jobId],
      ),
      rounds: await pool.query<{
        task: string;
        at: string;
        grp: string;
        job: string;
        n: string;
        rows: string;
      }>(
        `SELECT coalesce(r->>'task_id', '') AS task, r->>'scheduled_at' AS at,
                coalesce(r->>'group', '') AS grp, r->>'job_id' AS job, count(*) AS n,
                sum((r->>'rows')::bigint) AS rows
           FROM crm_history_partitions p, jsonb_array_elements(p.entry->'rounds') r
          WHERE p.entry->>'campaign_id' = $1
          GROUP BY 1, 2, 3, 4`,
        [exported._id],
      ),
      partitions: await pool.query<{ dir: string; file: string }>(
        "SELECT dir, file FROM crm_history_partitions WHERE entry->>'campaign_id' = $1 ORDER BY dir",
        [exported._id],
      ),
    }));
    expect(exportsOfJob.rows.map((r) => Number(r.n))).toEqual([1]);
    // Each round once, all from the one job, and every round of the file is there.
    const inFile = await duckDbPerRound(filePath);
    // Sorted here: PostgreSQL's collation need not order text as DuckDB does.
    const inCatalogue = rounds.rows
      .map((r) => [r.task, r.at, r.grp, r.job, Number(r.n), Number(r.rows)])
      .sort(byText);
    expect(inCatalogue).toEqual(
      inFile.map(([task, at, grp, rows]) => [task, at, grp, jobId, 1, rows]).sort(byText),
    );
    expect(inFile.length).toBeGreaterThanOrEqual(exported.tasks.length);

    // One Parquet file per partition on disk, the very ones the catalogue names.
    const folder = historyFolder(dataDir, await historyScope());
    const onDisk = (
      await filesUnder(join(folder, "events", `campaign_id=${hiveValue(exported._id)}`))
    )
      .map((p) => relative(folder, p))
      .sort();
    expect(partitions.rows.length).toBeGreaterThan(1);
    expect(onDisk).toEqual(partitions.rows.map((p) => p.file).sort());
    for (const p of partitions.rows) expect(p.file.startsWith(`${p.dir}/part-`)).toBe(true);
  });

  it("both processes answer the same history, each round as many rows as DuckDB reads in the file", async () => {
    const inFile = await duckDbPerRound(filePath);
    expect(inFile.length).toBeGreaterThan(0);
    for (const conn of conns) {
      const fromHistory = roundCounts(
        rowsOf(
          await call(conn, "query_export", {
            history: true,
            sql: perRoundSql("history", `WHERE job_id = '${jobId}'`),
            max_rows: 1000,
          }),
        ),
      );
      expect(fromHistory).toEqual(inFile);
      const fromFile = roundCounts(
        rowsOf(
          await call(conn, "query_export", {
            job_ids: [jobId],
            sql: perRoundSql("events", ""),
            max_rows: 1000,
          }),
        ),
      );
      expect(fromFile).toEqual(inFile);
      const totals = rowsOf(
        await call(conn, "query_export", {
          history: true,
          sql: `SELECT count(*), count(DISTINCT job_id) FROM history WHERE campaign_id = '${exported._id}'`,
        }),
      );
      expect(totals.map((row) => row.map(Number))).toEqual([
        [inFile.reduce((sum, r) => sum + r[3], 0), 1],
      ]);
    }
  });

  it("sync run beside the servers adds a campaign both see, and a second run creates nothing", async () => {
    const sync = async () => {
      const { stdout } = await run(
        process.execPath,
        [BUILT_BIN, "sync", "--campaign", synced._id, "--until", sandboxDay(sandbox, 0), "--json"],
        { env: serviceEnv(), timeout: 240_000 },
      );
      return JSON.parse(stdout) as Record<string, number>;
    };
    const created = sandbox.faults.requestCounts.create_export_job;
    const first = await sync();
    expect(first.campaigns).toBe(1);
    expect(first.exports_created).toBeGreaterThanOrEqual(1);
    expect(first.rounds_added).toBe(roundsToSync(synced));
    expect(first.rows_added).toBeGreaterThan(0);
    expect(sandbox.faults.requestCounts.create_export_job - created).toBe(first.exports_created);

    for (const conn of conns) {
      const [[rounds, rows]] = rowsOf(
        await call(conn, "query_export", {
          history: true,
          sql: `SELECT count(*), sum(n) FROM (SELECT task_id, scheduled_at, "group", count(*) AS n FROM history WHERE campaign_id = '${synced._id}' GROUP BY ALL)`,
        }),
      ) as [[number, number]];
      expect([Number(rounds), Number(rows)]).toEqual([first.rounds_added, first.rows_added]);
      const described = await call(conn, "query_export", { history: true });
      expect(described.isError, described.text).toBeFalsy();
      const held = (described.structured.history as { campaigns: { campaign_id: string }[] })
        .campaigns;
      expect(held.map((c) => c.campaign_id).sort()).toEqual([exported._id, synced._id].sort());
    }
    const records = await withPg((pool) =>
      pool.query<{ n: string }>(
        "SELECT count(*) AS n FROM crm_history_exports WHERE subject_id = $1",
        [synced._id],
      ),
    );
    expect(records.rows.map((r) => Number(r.n))).toEqual([first.exports_created]);

    const again = await sync();
    expect(again).toMatchObject({
      campaigns: 1,
      exports_created: 0,
      exports_reused: 0,
      rounds_added: 0,
      rows_added: 0,
    });
    expect(sandbox.faults.requestCounts.create_export_job - created).toBe(first.exports_created);
    expect(historyWarnings()).toEqual([]);
  }, 300_000);
});
