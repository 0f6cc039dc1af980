import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POOL_SIZE } from "../../src/ledger/postgres-pool.js";
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
 * How many connections a team-mode process holds, as PostgreSQL counts them: one `serve --http`
 * process of the built bin and then `sync`, each naming itself in pg_stat_activity through
 * CRM_DATABASE_URL's application_name, watched by this test from their first statement to their
 * exit. The server exports, adds the export to the history, answers history questions and a
 * burst of calls that keep the ledger, the catalogue and the audit trail busy at once; its
 * history's catalogue goes on after PostgreSQL is restarted (as the ledger does,
 * postgres-restart.test.ts); once stopped, neither process leaves a connection.
 */
const TOKEN = "pool-0123456789abcdef012345";
const SERVER = "crm-web-under-test";
const SYNC = "crm-sync-under-test";
const run = promisify(execFile);
const DAY_MS = 86_400_000;
const KST_MS = 9 * 3_600_000;
const UNAVAILABLE =
  /^Error in query_export: the server's database \(export ledger, budget, audit trail and history catalogue\) is unavailable right now, a temporary outage\. Retry the same call in a few seconds; /;
const COUNT_SQL = "SELECT count(*) AS n, count(DISTINCT job_id) AS jobs FROM history";

let db: TestPostgres;
let sandbox: RunningSandbox;
let dataDir: string;
let watcher: ConnectionWatcher;
let server: ServerProcess | undefined;
const clients: Client[] = [];

/** The most connections each application_name had at once, sampled until stopped. */
interface ConnectionWatcher {
  peak(name: string): number;
  now(name: string): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Counts pg_stat_activity's backends per application_name every few milliseconds. A connection
 * a pool opens stays open while idle for 30 s (ledger/postgres-pool.ts), so a burst's
 * connections are still there to count after it, whatever this sampling misses during it.
 */
function watchConnections(url: string): ConnectionWatcher {
  const pool = new pg.Pool({ connectionString: url, max: 1, application_name: "watcher" });
  // While PostgreSQL is stopped the watcher's own connection goes; it reconnects after.
  pool.on("error", () => undefined);
  const peaks = new Map<string, number>();
  let stopping = false;
  const count = async (name: string) => {
    const { rows } = await pool.query<{ n: string }>(
      "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1",
      [name],
    );
    return Number(rows[0]?.n);
  };
  const loop = (async () => {
    while (!stopping) {
      try {
        const { rows } = await pool.query<{ name: string; n: string }>(
          "SELECT application_name AS name, count(*) AS n FROM pg_stat_activity GROUP BY 1",
        );
        for (const { name, n } of rows) {
          peaks.set(name, Math.max(peaks.get(name) ?? 0, Number(n)));
        }
      } catch {
        // PostgreSQL is stopped; the next sample tries again.
      }
      // Pacing of the samples, not a wait for an event.
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  })();
  return {
    peak: (name) => peaks.get(name) ?? 0,
    now: count,
    async stop() {
      stopping = true;
      await loop;
      await pool.end();
    },
  };
}

function serviceEnv(applicationName: string): Record<string, string> {
  return {
    ...sandboxServerEnv(sandbox, dataDir),
    CRM_LOG_LEVEL: "warn",
    CRM_DATABASE_URL: `${db.url}?application_name=${applicationName}`,
  };
}

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: "team-connections", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
    }),
  );
  clients.push(client);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>) {
  return toResult(await client.callTool({ name, arguments: args }));
}

function ok(result: ToolResult): ToolResult {
  expect(result.isError, result.text).toBeFalsy();
  return result;
}

/** The history's rows and jobs, as a history question answers them. */
async function historyTotals(client: Client): Promise<number[]> {
  const r = ok(await call(client, "query_export", { history: true, sql: COUNT_SQL }));
  return must((r.structured.rows as unknown[][])[0], "a row of counts").map(Number);
}

/** Exports the campaign's events and waits until the history keeps the file. */
async function exportIntoHistory(client: Client, campaign: SandboxCampaign): Promise<string> {
  const started = ok(
    await call(client, "start_export", {
      type: "campaign_event_data",
      campaign_id: campaign._id,
      wait_seconds: 50,
    }),
  );
  const jobId = (started.structured.job as { _id: string })._id;
  await untilKept(async (args) => ok(await call(client, "check_export", args)), jobId, {
    timeoutMs: 120_000,
    intervalMs: 250,
  });
  return jobId;
}

function recordsOf(c: SandboxCampaign): number {
  return c.tasks.reduce((n, t) => n + t.rounds.reduce((m, r) => m + r.records, 0), 0);
}

/** Rounds of `c` sync finds in its window (the 30 days up to the sandbox's today). */
function roundsToSync(c: SandboxCampaign): number {
  const midnight = Math.floor((sandbox.world.now + KST_MS) / DAY_MS) * DAY_MS - KST_MS;
  return c.tasks.filter((t) => t.scheduled_at >= midnight - 29 * DAY_MS && t.aggregated).length;
}

describe("team mode: one pool per process", needs("postgresql"), () => {
  /** Small campaigns, all rounds aggregated: one exported before the restart, one after, one synced. */
  let before: SandboxCampaign;
  let after: SandboxCampaign;
  let synced: SandboxCampaign;

  beforeAll(async () => {
    [db, sandbox] = await Promise.all([startTestPostgres(), startSandbox({ jobSeconds: 1 })]);
    dataDir = await mkdtemp(join(tmpdir(), "crm-team-connections-"));
    watcher = watchConnections(db.url);
    const small = sandbox.world.campaigns
      .filter((c) => c.role === "normal" && !c.is_ab_test && c.tasks.every((t) => t.aggregated))
      .sort((a, b) => recordsOf(a) - recordsOf(b));
    synced = must(
      small.find((c) => roundsToSync(c) > 0),
      "a small campaign with rounds in sync's window",
    );
    [before, after] = small.filter((c) => c !== synced && c.tasks.length > 0) as [
      SandboxCampaign,
      SandboxCampaign,
    ];
    must(after, "two more small campaigns");
  }, 60_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    server?.child.kill("SIGKILL");
    await watcher?.stop();
    await Promise.all([db?.stop(), sandbox?.close()]);
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  it("a server that exported, answered history questions and a burst of calls holds at most one pool's connections", async () => {
    server = await spawnHttpServer({ ...serviceEnv(SERVER), CRM_HTTP_TOKENS: `team:${TOKEN}` });
    const first = await connect(server.url);
    const jobId = await exportIntoHistory(first, before);
    const [rows, jobs] = await historyTotals(first);
    expect(rows).toBeGreaterThan(0);
    expect(jobs).toBe(1);

    // Calls that keep the ledger (reading a job), the audit trail (a record per call) and the
    // catalogue (each history question, and each check_export's history status) busy at once.
    const url = server.url;
    const burst = await Promise.all(Array.from({ length: 7 }, () => connect(url)));
    const questions = burst.slice(0, 3).map((client) => historyTotals(client));
    const checks = burst.flatMap((client) =>
      Array.from({ length: 5 }, () =>
        call(client, "check_export", { job_id: jobId, wait_seconds: 0 }).then((r) =>
          r.isError ? r.text : "ok",
        ),
      ),
    );
    expect(await Promise.all(questions)).toEqual(Array(3).fill([rows, 1]));
    expect(await Promise.all(checks)).toEqual(Array(7 * 5).fill("ok"));

    // What the burst opened is still open (idle), so counting now sees at least as many.
    const held = await watcher.now(SERVER);
    expect(held).toBeGreaterThan(1);
    expect(held).toBeLessThanOrEqual(POOL_SIZE);
    expect(watcher.peak(SERVER)).toBeLessThanOrEqual(POOL_SIZE);
    expect(server.stderr()).not.toMatch(/database unavailable|\] (warn|error): history/);
  }, 300_000);

  it("the history's catalogue answers and takes new exports again after PostgreSQL is restarted", async () => {
    const client = must(clients[0], "the first client");
    const totals = await historyTotals(client);
    await db.halt();
    const during = await call(client, "query_export", { history: true, sql: COUNT_SQL });
    expect(during.isError, during.text).toBe(true);
    expect(during.text).toMatch(UNAVAILABLE);
    await db.resume();

    // The same question answers again with the same history, once the database does.
    let again: number[] | undefined;
    await waitUntil(
      async () => {
        const r = await call(client, "query_export", { history: true, sql: COUNT_SQL });
        if (r.isError) return false;
        again = must((r.structured.rows as unknown[][])[0], "a row of counts").map(Number);
        return true;
      },
      "a history question answered after the restart",
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    expect(again).toEqual(totals);

    // A new export is added: the catalogue commits again, and every reader sees it.
    const jobId = await exportIntoHistory(client, after);
    const [rows, jobs] = await historyTotals(client);
    expect(jobs).toBe(2);
    expect(rows).toBeGreaterThan(must(totals[0], "rows before"));
    const check = new pg.Pool({ connectionString: db.url, max: 1 });
    try {
      const kept = await check.query("SELECT 1 FROM crm_history_exports WHERE job_id = $1", [
        jobId,
      ]);
      expect(kept.rows).toHaveLength(1);
    } finally {
      await check.end();
    }
    expect(watcher.peak(SERVER)).toBeLessThanOrEqual(POOL_SIZE);
    const log = must(server, "the server").stderr();
    expect(log).not.toMatch(/unhandled|uncaught|database writes lost|\] (warn|error): history/i);
  }, 300_000);

  it("a stopped server leaves no connection", async () => {
    const stopped = must(server, "the server");
    const exited = new Promise<number | null>((resolve) => stopped.child.once("exit", resolve));
    stopped.child.kill("SIGTERM");
    expect(await exited).toBe(0);
    server = undefined;
    await waitUntil(async () => (await watcher.now(SERVER)) === 0, "the server's connections gone");
    expect(await watcher.now(SERVER)).toBe(0);
    expect(stopped.stderr()).not.toMatch(/database writes lost/);
  }, 60_000);

  it("sync holds at most one pool's connections and leaves none", async () => {
    const { stdout } = await run(
      process.execPath,
      [BUILT_BIN, "sync", "--campaign", synced._id, "--until", sandboxDay(sandbox, 0), "--json"],
      { env: serviceEnv(SYNC), timeout: 240_000 },
    );
    const report = JSON.parse(stdout) as Record<string, number>;
    expect(report.rounds_added).toBe(roundsToSync(synced));
    expect(watcher.peak(SYNC)).toBeGreaterThanOrEqual(1);
    expect(watcher.peak(SYNC)).toBeLessThanOrEqual(POOL_SIZE);
    await waitUntil(async () => (await watcher.now(SYNC)) === 0, "sync's connections gone");
    expect(await watcher.now(SYNC)).toBe(0);
  }, 300_000);
});
