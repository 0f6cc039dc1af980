import { mkdtemp, rm } from "node:fs/promises";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import pg from "pg";
import { Agent, fetch as undiciFetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/index.js";
import type { RunningSandbox } from "../../src/sandbox/types.js";
import { must } from "../helpers/must.js";
import { needs } from "../helpers/needs.js";
import { startTestPostgres, type TestPostgres } from "../helpers/postgres.js";
import { sandboxDay } from "../helpers/sandbox-day.js";
import { type ServerProcess, spawnHttpServer } from "../helpers/serve-http.js";
import { type ToolResult, toResult } from "../helpers/tool-harness.js";
import { waitUntil } from "../helpers/wait-until.js";
import { childRunEnv } from "../setup/temp-folder.js";

/**
 * PostgreSQL stopped (`pg_ctl stop -m fast`) and started again under load, in team mode: one
 * `serve --http` process (the built bin) with its ledger, budget, claims and audit trail in a
 * throwaway cluster, 20 clients calling tools meanwhile, and one export job that the service
 * creates while the database is down. scripts/load-http.mjs --pg-outage runs the same for the
 * figures in docs/team-mode.md, with a 10-s outage.
 */
const TOKEN = "restart-0123456789abcdef0123";
const PASSWORD = "pw-never-shown-4f1c9a7e2b";
const CLIENTS = 20;
/** The outage itself: the scenario's duration, shortened from 10 s to keep the test short. */
const OUTAGE_MS = 5_000;
/**
 * Export creations in the test, the whole budget: the setup job, 4 before the outage, the held
 * one, 4 after. A slot counted for a creation that never reached the service would refuse one.
 */
const CREATIONS = 10;
/** What every call that needed the database while it was down must answer, and nothing else. */
const UNAVAILABLE =
  /^Error in (check_export|start_export|campaign_metrics): the server's database \(export ledger, budget, audit trail and history catalogue\) is unavailable right now, a temporary outage\. Retry the same call in a few seconds; /;

let db: TestPostgres;
let sandbox: RunningSandbox;
let proxy: HoldingProxy;
let dataDir: string;
let server: ServerProcess | undefined;
const clients: Client[] = [];

/** One finished call as the client saw it. */
interface Outcome {
  tool: string;
  result?: ToolResult;
  thrown?: string;
  /** When the call was answered (performance.now()). */
  at: number;
}

describe("team mode: PostgreSQL restarted under load", needs("postgresql"), () => {
  beforeAll(async () => {
    db = await startTestPostgres();
    dataDir = await mkdtemp(join(tmpdir(), "crm-pg-restart-"));
    sandbox = await startSandbox({ jobSeconds: 1 });
    proxy = await startHoldingProxy(sandbox.base_url);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await agent.close();
    server?.child.kill("SIGKILL");
    await proxy?.close();
    await sandbox?.close();
    await db?.stop();
    await rm(dataDir, { recursive: true, force: true });
  }, 30_000);

  it("calls in flight fail with a retryable error, nothing exits, the ledger, budget and audit trail stay whole", async () => {
    const url = db.url.replace("postgres://crm@", `postgres://crm:${PASSWORD}@`);
    server = await spawnServer(url);
    const conns = await Promise.all(
      Array.from({ length: CLIENTS }, () => connect((server as { url: string }).url)),
    );
    const [setupClient, heldClient, ...workers] = conns as [Client, Client, ...Client[]];
    const scenario = sandbox.world.scenarios[0]?._id;
    const request = (back: number) => ({
      type: "scenario_daily_metrics",
      scenario_id: scenario,
      from: sandboxDay(sandbox, back + 6),
      to: sandboxDay(sandbox, back),
      wait_seconds: 0,
    });
    const createsBefore = sandbox.faults.requestCounts.create_export_job;
    const outcomes: Outcome[] = [];
    const call = async (client: Client, tool: string, args: Record<string, unknown>) => {
      try {
        const result = toResult(await client.callTool({ name: tool, arguments: args }));
        outcomes.push({ tool, result, at: performance.now() });
        return result;
      } catch (error) {
        const cause =
          error instanceof Error && error.cause !== undefined ? ` (${String(error.cause)})` : "";
        outcomes.push({ tool, thrown: `${String(error)}${cause}`, at: performance.now() });
        return undefined;
      }
    };
    const unavailable = (r: ToolResult | undefined) =>
      r?.isError === true && UNAVAILABLE.test(r.text);

    const setup = await call(setupClient, "start_export", { ...request(3), wait_seconds: 30 });
    expect(setup?.isError).toBeFalsy();
    const setupJob = jobIdOf(setup);

    // 15 clients read the ledger (and now and then the service); 4 create export jobs, one each
    // before the outage and one each from its start on, each request retried until it succeeds;
    // the 20th makes the creation the service completes while the database is down.
    let stopping = false;
    let halted: () => void = () => undefined;
    const outageBegun = new Promise<void>((resolve) => {
      halted = resolve;
    });
    const created: string[] = [];
    const readers = [setupClient, ...workers.slice(4)].map(async (client, n) => {
      for (let turn = n; !stopping && !outcomes.some((o) => o.thrown); turn += 1) {
        // campaign_metrics needs no database but its audit record; the sandbox computes it in
        // this process, so it is the rarer call.
        if (turn % 8 === 0) await call(client, "campaign_metrics", {});
        else if (turn % 2 === 1) await call(client, "check_export", {});
        else await call(client, "check_export", { job_id: setupJob, wait_seconds: 0 });
      }
    });
    const creators = workers.slice(0, 4).map(async (client, n) => {
      for (let i = 0; i < 2; i += 1) {
        if (i === 1) await outageBegun;
        while (!stopping) {
          const result = await call(client, "start_export", request(10 + n * 2 + i));
          if (result !== undefined && !result.isError) {
            created.push(String(jobIdOf(result)));
            break;
          }
          if (!unavailable(result)) return;
          // Pacing of the retries, not a wait for an event.
          await sleep(100);
        }
      }
    });

    let haltedAt = Number.POSITIVE_INFINITY;
    let heldJobId: string | undefined;
    // What a wait that ran out says besides its event: how far the load had got.
    const explain = (error: unknown): never => {
      const odd = outcomes.filter(
        (o) => o.thrown !== undefined || (o.result?.isError && !unavailable(o.result)),
      );
      throw new Error(
        `${String(error)}; ${outcomes.length} calls answered, ${created.length} jobs created; other failures: ${JSON.stringify(odd.slice(0, 3))}`,
      );
    };
    try {
      await waitUntil(
        () => created.length >= 4 && outcomes.length >= 60,
        "load before the outage",
        {
          timeoutMs: 40_000,
        },
      ).catch(explain);
      // The service creates this job (the budget already counts it) while the database is down.
      const hold = proxy.holdNextCreate();
      const heldCall = call(heldClient, "start_export", request(40));
      await waitUntil(() => hold.jobId() !== undefined, "the held creation at the service", {
        timeoutMs: 20_000,
      }).catch(explain);
      haltedAt = performance.now();
      await db.halt();
      halted();
      hold.release();
      const held = await heldCall;
      expect(held?.isError, held?.text).toBe(true);
      expect(held?.text).toMatch(UNAVAILABLE);
      await waitUntil(
        () => outcomes.filter((o) => o.at > haltedAt && unavailable(o.result)).length >= 20,
        "calls failing during the outage",
        { timeoutMs: 20_000 },
      ).catch(explain);
      await sleep(Math.max(0, haltedAt + OUTAGE_MS - performance.now()));
      await db.resume();
      const resumedAt = performance.now();

      // The retried call finds the job its first try made, which the service made once.
      let again: ToolResult | undefined;
      await waitUntil(
        async () => {
          again = await call(heldClient, "start_export", request(40));
          return again !== undefined && !again.isError;
        },
        "the held request answered after the restart",
        { timeoutMs: 30_000, intervalMs: 200 },
      ).catch(explain);
      heldJobId = hold.jobId();
      expect(jobIdOf(again)).toBe(heldJobId);
      await waitUntil(
        () =>
          created.length === 8 &&
          outcomes.filter(
            (o) => o.at > resumedAt && o.result !== undefined && o.result.isError !== true,
          ).length >= 60,
        "load after the restart",
        { timeoutMs: 40_000 },
      ).catch(explain);
    } finally {
      // Also when an expectation fails: the clients' loops end with the test.
      stopping = true;
      halted();
      await Promise.all([...readers, ...creators]);
    }

    // No process exited; every call was answered, the failed ones only with the retryable error.
    expect(server.child.exitCode).toBeNull();
    expect(server.child.signalCode).toBeNull();
    expect(outcomes.filter((o) => o.thrown !== undefined)).toEqual([]);
    const failed = outcomes.filter((o) => o.result?.isError);
    expect(failed.length).toBeGreaterThan(20);
    for (const { result } of failed) {
      expect(result?.text).toMatch(UNAVAILABLE);
      expect(result?.text).not.toContain(PASSWORD);
    }
    expect(failed.every((o) => o.at > haltedAt)).toBe(true);
    const health = await fetch(new URL("/health", server.url));
    expect(health.status).toBe(200);

    const check = new pg.Pool({ connectionString: db.url, max: 1 });
    try {
      const count = async (sql: string) =>
        Number((await check.query<{ n: string }>(sql)).rows[0]?.n);
      // Each job once, one per request; the budget counts exactly what reached the service.
      const serviceCreated = sandbox.faults.requestCounts.create_export_job - createsBefore;
      expect(serviceCreated).toBe(CREATIONS);
      expect(await count("SELECT count(*) AS n FROM crm_export_jobs")).toBe(CREATIONS);
      expect(await count("SELECT count(DISTINCT request_key) AS n FROM crm_export_jobs")).toBe(
        CREATIONS,
      );
      expect(await count("SELECT count(*) AS n FROM crm_export_create_calls")).toBe(CREATIONS);
      expect(await count("SELECT count(*) AS n FROM crm_export_create_claims")).toBe(0);
      const heldRow = await check.query("SELECT 1 FROM crm_export_jobs WHERE job_id = $1", [
        heldJobId,
      ]);
      expect(heldRow.rows).toHaveLength(1);
      // Every answered call has its record, those answered during the outage included.
      const answered = outcomes.length;
      const ok = outcomes.filter((o) => o.result !== undefined && o.result.isError !== true).length;
      await waitUntil(
        async () => (await count("SELECT count(*) AS n FROM crm_audit_calls")) >= answered,
        "the audit records held during the outage",
        { timeoutMs: 20_000, intervalMs: 200 },
      );
      expect(await count("SELECT count(*) AS n FROM crm_audit_calls")).toBe(answered);
      expect(await count("SELECT count(*) AS n FROM crm_audit_calls WHERE outcome = 'ok'")).toBe(
        ok,
      );
      const audit = JSON.stringify((await check.query("SELECT * FROM crm_audit_calls")).rows);
      expect(audit).not.toContain(TOKEN);
    } finally {
      await check.end();
    }
    const log = server.stderr();
    expect(log).toContain("export job kept in memory until the database answers again");
    expect(log).toContain("database answers again");
    expect(log).not.toContain(PASSWORD);
    expect(log).not.toContain(TOKEN);
    expect(log).not.toMatch(/unhandled|uncaught/i);
  }, 120_000);
});

function jobIdOf(result: ToolResult | undefined): string | undefined {
  return (result?.structured.job as { _id?: string } | undefined)?._id;
}

function spawnServer(databaseUrl: string): Promise<ServerProcess> {
  return spawnHttpServer({
    PATH: process.env.PATH,
    ...childRunEnv(),
    CRM_LOG_LEVEL: "warn",
    // Creations go through the holding proxy; downloads go to the sandbox itself.
    CRM_BASE_URL: proxy.url,
    CRM_REALTIME_BASE_URL: sandbox.base_url,
    CRM_APPLICATION_ID: sandbox.application_id,
    CRM_SECRET_KEY: sandbox.secret_key,
    CRM_RECOMMEND_SECRET_KEY: sandbox.recommend_secret_key,
    CRM_DATA_DIR: dataDir,
    CRM_POLL_INTERVAL_SECONDS: "0.2",
    CRM_DATABASE_URL: databaseUrl,
    CRM_HTTP_TOKENS: `load:${TOKEN}`,
    CRM_HTTP_MAX_CONCURRENT: "64",
  });
}

/**
 * The clients' connections, closed after 1 s idle: well before the server's 5-s keep-alive
 * ends, so that a client starved of CPU for a few seconds does not send a call on a connection
 * the server is closing (a "fetch failed" that has nothing to do with the database).
 */
const agent = new Agent({ keepAliveTimeout: 1_000, keepAliveMaxTimeout: 1_000 });

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: "pg-restart", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
      fetch: (input, init) =>
        undiciFetch(input, {
          ...(init as Parameters<typeof undiciFetch>[1]),
          dispatcher: agent,
        }) as unknown as Promise<Response>,
    }),
  );
  clients.push(client);
  return client;
}

interface HoldingProxy {
  url: string;
  /**
   * Holds the service's answer to the next export-job creation (the job is made) until
   * released; `jobId()` is its ID once the service has answered.
   */
  holdNextCreate(): { jobId(): string | undefined; release(): void };
  close(): Promise<void>;
}

/** A loopback proxy to the sandbox that can hold back one creation's answer. */
async function startHoldingProxy(target: string): Promise<HoldingProxy> {
  const upstream = new URL(target);
  let hold: { answered: (body: string) => void; released: Promise<void> } | undefined;
  const proxyServer: Server = createServer((req, res) => {
    const forward = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
      },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on("data", (chunk: Buffer) => chunks.push(chunk));
        answer.on("end", () => {
          const body = Buffer.concat(chunks);
          const send = () => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            res.end(body);
          };
          const creation =
            req.method === "POST" && /\/export-jobs$/.test(must(req.url, "request URL"));
          const held = creation ? hold : undefined;
          if (held === undefined) return send();
          hold = undefined;
          held.answered(body.toString("utf8"));
          void held.released.then(send);
        });
      },
    );
    forward.on("error", () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => proxyServer.listen(0, "127.0.0.1", resolve));
  const { port } = proxyServer.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    holdNextCreate() {
      let jobId: string | undefined;
      let release: () => void = () => undefined;
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      hold = {
        answered: (body) => {
          jobId = (JSON.parse(body) as { _id?: string })._id;
        },
        released,
      };
      return { jobId: () => jobId, release };
    },
    async close() {
      proxyServer.closeAllConnections();
      await new Promise<void>((resolve) => proxyServer.close(() => resolve()));
    },
  };
}
