import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { DateTime } from "luxon";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startSandbox } from "../../../src/sandbox/index.js";
import type { RunningSandbox } from "../../../src/sandbox/types.js";
import { needs } from "../../helpers/needs.js";
import { startTestPostgres, type TestPostgres } from "../../helpers/postgres.js";

// Identical start_export calls made at the same instant in two server processes that share a
// ledger (one data folder, or one PostgreSQL database) create one job on the service: one
// process claims the creation, the other waits for it and joins the job.
const BIN = new URL("../../../dist/cli.js", import.meta.url).pathname;

let sandbox: RunningSandbox;
const folders: string[] = [];
const clients: Client[] = [];
beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error("dist/cli.js missing: run npm run build (npm test does)");
  // The servers read the real clock (remote mode), so the sandbox does too.
  sandbox = await startSandbox({ jobSeconds: 0 });
}, 60_000);
afterAll(async () => {
  await sandbox.close();
  await Promise.all(folders.map((f) => rm(f, { recursive: true, force: true })));
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

async function folder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "crm-concurrent-"));
  folders.push(dir);
  return dir;
}

async function server(dataDir: string, databaseUrl?: string): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN],
    env: {
      // The parent's environment (a clock moved by faketime included) without our settings.
      ...Object.fromEntries(
        Object.entries(process.env).filter(
          (e): e is [string, string] => !e[0].startsWith("CRM_") && e[1] !== undefined,
        ),
      ),
      CRM_BASE_URL: sandbox.base_url,
      CRM_APPLICATION_ID: sandbox.application_id,
      CRM_SECRET_KEY: sandbox.secret_key,
      CRM_RECOMMEND_SECRET_KEY: sandbox.recommend_secret_key,
      CRM_DATA_DIR: dataDir,
      CRM_POLL_INTERVAL_SECONDS: "1",
      CRM_LOG_LEVEL: "warn",
      ...(databaseUrl === undefined ? {} : { CRM_DATABASE_URL: databaseUrl }),
    },
    stderr: "pipe",
  });
  const client = new Client({ name: "concurrent", version: "1.0.0" });
  await client.connect(transport);
  clients.push(client);
  return client;
}

interface Result {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content: Array<{ type: string; text?: string }>;
}

/** Both servers call the identical start_export at once; returns both results. */
async function raceIdenticalCreates(one: Client, two: Client, daysAgo: number) {
  // A day of the sandbox's data, counted from the sandbox's clock at its start rather than read
  // again now: a run that crosses midnight in Seoul still asks for the same day.
  const from = DateTime.fromMillis(sandbox.world.now, { zone: "Asia/Seoul" })
    .minus({ days: daysAgo })
    .toISODate();
  const args = {
    type: "scenario_daily_metrics",
    scenario_id: sandbox.scenario_ids[0],
    from,
    to: from,
    wait_seconds: 20,
  };
  // The service answers creates slowly, so neither call can finish before the other starts.
  sandbox.faults.inject({
    operation: "create_export_job",
    action: { type: "delay", ms: 1_500 },
    times: 2,
  });
  const before = sandbox.faults.requestCounts.create_export_job;
  const progress: string[] = [];
  const onprogress = (p: { message?: string }) => {
    if (p.message !== undefined) progress.push(p.message);
  };
  const results = (await Promise.all([
    one.callTool({ name: "start_export", arguments: args }, { onprogress }),
    two.callTool({ name: "start_export", arguments: args }, { onprogress }),
  ])) as Result[];
  sandbox.faults.clear();
  return { results, creates: sandbox.faults.requestCounts.create_export_job - before, progress };
}

function check({
  results,
  creates,
  progress,
}: {
  results: Result[];
  creates: number;
  progress: string[];
}): void {
  const text = (r: Result) =>
    r.content.flatMap((c) => (c.text === undefined ? [] : [c.text])).join("\n");
  for (const result of results) expect(result.isError, text(result)).toBeFalsy();
  expect(creates).toBe(1);
  // The call that waited said so while it waited.
  expect(progress.some((m) => /being created by another server process/.test(m))).toBe(true);
  const ids = results.map((r) => (r.structuredContent?.job as { _id?: string } | undefined)?._id);
  expect(ids[0]).toBeTypeOf("string");
  expect(ids[1]).toBe(ids[0]);
  // One side created, the other joined; both count one creation against the shared budget.
  expect(results.map((r) => r.structuredContent?.reused).sort()).toEqual([false, true]);
  for (const result of results) {
    expect((result.structuredContent?.budget as { used?: number } | undefined)?.used).toBe(1);
  }
}

describe("identical creates in two processes at once", () => {
  it("make one job when the processes share a data folder", async () => {
    const dataDir = await folder();
    const [one, two] = await Promise.all([server(dataDir), server(dataDir)]);
    check(await raceIdenticalCreates(one, two, 3));
  }, 90_000);

  describe("sharing a PostgreSQL database", needs("postgresql"), () => {
    let db: TestPostgres | undefined;
    beforeAll(async () => {
      db = await startTestPostgres();
    }, 60_000);
    afterAll(async () => {
      await db?.stop();
    });

    it("make one job, each process with its own data folder", async () => {
      if (db === undefined) throw new Error("test PostgreSQL not started");
      const [one, two] = await Promise.all([
        server(await folder(), db.url),
        server(await folder(), db.url),
      ]);
      check(await raceIdenticalCreates(one, two, 4));
    }, 90_000);
  });
});
