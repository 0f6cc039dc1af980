import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/index.js";
import type { RunningSandbox } from "../../src/sandbox/types.js";
import { needs } from "../helpers/needs.js";
import { startTestPostgres, type TestPostgres } from "../helpers/postgres.js";
import { sandboxDay } from "../helpers/sandbox-day.js";
import { type ServerProcess, sandboxServerEnv, spawnHttpServer } from "../helpers/serve-http.js";
import { toResult } from "../helpers/tool-harness.js";
import { waitUntil } from "../helpers/wait-until.js";

/**
 * Team mode end to end: several `serve --http` processes (the built bin) sharing one PostgreSQL
 * ledger and one data folder, in front of a sandbox (real clock: the servers read the real one).
 */
const TOKENS = {
  alice: "alice-0123456789abcdef0123",
  bob: "bob-0123456789abcdef012345",
  carol: "carol-0123456789abcdef0123",
} as const;
type User = keyof typeof TOKENS;

let db: TestPostgres;
let dataDir: string;
const processes: ServerProcess[] = [];
const clients: Client[] = [];

async function spawnServer(sandbox: RunningSandbox): Promise<ServerProcess> {
  const server = await spawnHttpServer(
    {
      ...sandboxServerEnv(sandbox, dataDir),
      CRM_DATABASE_URL: db.url,
      CRM_HTTP_TOKENS: Object.entries(TOKENS)
        .map(([name, token]) => `${name}:${token}`)
        .join(","),
    },
    20_000,
  );
  processes.push(server);
  return server;
}

async function connect(server: ServerProcess, user: User): Promise<Client> {
  const client = new Client({ name: `team-${user}`, version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: { Authorization: `Bearer ${TOKENS[user]}` } },
    }),
  );
  clients.push(client);
  return client;
}

describe("team mode: serve --http with the ledger in PostgreSQL", needs("postgresql"), () => {
  beforeAll(async () => {
    db = await startTestPostgres();
    dataDir = await mkdtemp(join(tmpdir(), "crm-team-"));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    for (const p of processes) p.child.kill("SIGKILL");
    await db?.stop();
    await rm(dataDir, { recursive: true, force: true });
  }, 30_000);

  it("3 processes, 30 concurrent forced creations, budget 10 per 10 minutes: exactly 10 reach the service", async () => {
    const sandbox = await startSandbox({ jobSeconds: 1 });
    try {
      const servers = await Promise.all([0, 1, 2].map(() => spawnServer(sandbox)));
      const users: User[] = ["alice", "bob", "carol"];
      const conns = await Promise.all(servers.map((s, i) => connect(s, users[i] as User)));
      const scenario = sandbox.world.scenarios[0]?._id;
      const before = sandbox.faults.requestCounts.create_export_job;
      const calls = Array.from({ length: 30 }, (_, i) =>
        (conns[i % 3] as Client)
          .callTool({
            name: "start_export",
            arguments: {
              type: "scenario_daily_metrics",
              scenario_id: scenario,
              from: sandboxDay(sandbox, 10),
              to: sandboxDay(sandbox, 3),
              force: true,
              wait_seconds: 0,
            },
          })
          .then(toResult),
      );
      const results = await Promise.all(calls);
      const created = results.filter((r) => !r.isError);
      const refused = results.filter((r) => r.isError);
      expect(sandbox.faults.requestCounts.create_export_job - before).toBe(10);
      expect(created.length).toBe(10);
      expect(refused.length).toBe(20);
      for (const r of refused) expect(r.text).toMatch(/budget used up: 10 of 10/);
      const ids = new Set(created.map((r) => (r.structured.job as { _id: string })._id));
      expect(ids.size).toBe(10);
      // Every process sees all ten in the shared ledger, with who created them.
      for (const conn of conns) {
        const listing = toResult(
          await conn.callTool({ name: "check_export", arguments: { limit: 50 } }),
        );
        expect(listing.structured.total ?? (listing.structured.jobs as unknown[]).length).toBe(10);
      }
      const { default: pg } = await import("pg");
      const pool = new pg.Pool({ connectionString: db.url, max: 1 });
      try {
        const rows = await pool.query<{ created_by: string; n: string }>(
          "SELECT created_by, count(*) AS n FROM crm_export_jobs GROUP BY created_by",
        );
        const total = rows.rows.reduce((s, r) => s + Number(r.n), 0);
        expect(total).toBe(10);
        for (const row of rows.rows) expect(users).toContain(row.created_by);
        const dump = JSON.stringify((await pool.query("SELECT * FROM crm_export_jobs")).rows);
        for (const token of Object.values(TOKENS)) expect(dump).not.toContain(token);
      } finally {
        await pool.end();
      }
      for (const p of servers) {
        for (const token of Object.values(TOKENS)) expect(p.stderr()).not.toContain(token);
      }
    } finally {
      await sandbox.close();
    }
  }, 90_000);

  it("reuses one job for identical requests of different users, and a SIGKILL mid-call loses no entry", async () => {
    const sandbox = await startSandbox({ jobSeconds: 3 });
    try {
      const [first, second] = await Promise.all([spawnServer(sandbox), spawnServer(sandbox)]);
      if (first === undefined || second === undefined) throw new Error("servers missing");
      const alice = await connect(first, "alice");
      const bob = await connect(second, "bob");
      const request = {
        type: "scenario_daily_metrics",
        scenario_id: sandbox.world.scenarios[1]?._id,
        from: sandboxDay(sandbox, 12),
        to: sandboxDay(sandbox, 5),
      };
      const before = sandbox.faults.requestCounts.create_export_job;
      const made = toResult(
        await alice.callTool({ name: "start_export", arguments: { ...request, wait_seconds: 30 } }),
      );
      expect(made.isError).toBeFalsy();
      const reused = toResult(
        await bob.callTool({ name: "start_export", arguments: { ...request, wait_seconds: 30 } }),
      );
      expect(reused.isError).toBeFalsy();
      expect(reused.structured.reused).toBe(true);
      expect((reused.structured.job as { _id: string })._id).toBe(
        (made.structured.job as { _id: string })._id,
      );
      expect(reused.structured.file_path).toBe(made.structured.file_path);
      expect(sandbox.faults.requestCounts.create_export_job - before).toBe(1);

      // Carol's call is killed while it waits for her new job.
      const carol = await connect(first, "carol");
      const created = sandbox.faults.requestCounts.create_export_job;
      const doomed = carol.callTool({
        name: "start_export",
        arguments: { ...request, scenario_id: sandbox.world.scenarios[2]?._id, wait_seconds: 45 },
      });
      let early: unknown;
      doomed.then(
        (r) => {
          early = r;
        },
        () => undefined,
      );
      const polls = sandbox.faults.requestCounts.get_export_job;
      await waitUntil(
        () => sandbox.faults.requestCounts.create_export_job === created + 1,
        "carol's job to be created",
      ).catch((error: unknown) => {
        throw new Error(`${String(error)}: ${JSON.stringify(early)}`);
      });
      await waitUntil(
        () => sandbox.faults.requestCounts.get_export_job > polls,
        "a poll of carol's job",
      );
      first.child.kill("SIGKILL");
      await expect(doomed).rejects.toThrow();
      // The other process knows the job, who made it, and finishes it.
      const listing = toResult(await bob.callTool({ name: "check_export", arguments: {} }));
      const jobs = listing.structured.jobs as Array<{ job_id: string; created_by?: string }>;
      const lost = jobs.find((j) => j.job_id !== (made.structured.job as { _id: string })._id);
      expect(lost).toBeDefined();
      const { default: pg } = await import("pg");
      const pool = new pg.Pool({ connectionString: db.url, max: 1 });
      try {
        const row = await pool.query<{ created_by: string; status: string }>(
          "SELECT created_by, status FROM crm_export_jobs WHERE job_id = $1",
          [lost?.job_id],
        );
        expect(row.rows[0]?.created_by).toBe("carol");
      } finally {
        await pool.end();
      }
      const finished = toResult(
        await bob.callTool({
          name: "check_export",
          arguments: { job_id: lost?.job_id, wait_seconds: 30 },
        }),
      );
      expect(finished.isError).toBeFalsy();
      expect(finished.structured.file_path).toBeTypeOf("string");
    } finally {
      await sandbox.close();
    }
  }, 120_000);
});
