import { type ChildProcess, execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/index.js";
import type { RunningSandbox } from "../../src/sandbox/types.js";
import { needs } from "../helpers/needs.js";
import { startTestProvider, type TestProvider } from "../helpers/openid-provider.js";
import { startTestPostgres, type TestPostgres } from "../helpers/postgres.js";
import { sandboxDay } from "../helpers/sandbox-day.js";
import { BUILT_BIN, sandboxServerEnv, spawnHttpServer } from "../helpers/serve-http.js";
import { toResult } from "../helpers/tool-harness.js";

/**
 * Team mode with the organisation's identity: two `serve --http` processes (the built bin) on
 * one PostgreSQL database behind one public URL, three callers with different scopes (two with
 * the provider's access tokens, one with a scoped static token). Afterwards `audit --json` lists
 * every call with its caller, and every export job names its creator.
 */
const PUBLIC_URL = "https://crm-mcp.example.com/mcp";
const LEAD_TOKEN = "lead-static-token-0123456789abcdef";
const run = promisify(execFile);

let db: TestPostgres;
let provider: TestProvider;
let sandbox: RunningSandbox;
let dataDir: string;
const children: ChildProcess[] = [];
const clients: Client[] = [];

function serviceEnv(): Record<string, string> {
  return {
    ...sandboxServerEnv(sandbox, dataDir),
    CRM_DATABASE_URL: db.url,
  };
}

async function spawnServer(): Promise<string> {
  const server = await spawnHttpServer({
    ...serviceEnv(),
    CRM_OAUTH_ISSUER: provider.issuer,
    // Both processes are one resource behind one public URL: tokens name it as audience.
    CRM_PUBLIC_URL: PUBLIC_URL,
    CRM_HTTP_TOKENS: `lead:${LEAD_TOKEN}:crm.export`,
  });
  children.push(server.child);
  return server.url;
}

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: "team-oauth", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  clients.push(client);
  return client;
}

describe("three callers, two processes, one database", needs("postgresql"), () => {
  beforeAll(async () => {
    [db, provider, sandbox] = await Promise.all([
      startTestPostgres(),
      startTestProvider(),
      startSandbox({ jobSeconds: 1 }),
    ]);
    dataDir = await mkdtemp(join(tmpdir(), "crm-team-oauth-"));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    for (const child of children) child.kill("SIGKILL");
    await Promise.all([db?.stop(), provider?.close(), sandbox?.close()]);
    await rm(dataDir, { recursive: true, force: true });
  }, 30_000);

  it("audit --json lists every call with its caller, and each export job names its creator", async () => {
    const [one, two] = await Promise.all([spawnServer(), spawnServer()]);
    if (one === undefined || two === undefined) throw new Error("servers missing");
    const exporterToken = await provider.clientCredentials(
      "exporter",
      PUBLIC_URL,
      "crm.read crm.export",
    );
    const analystToken = await provider.clientCredentials(
      "analyst",
      PUBLIC_URL,
      "crm.read crm.query",
    );
    const exporter = [
      await connect(one, exporterToken),
      await connect(two, exporterToken),
    ] as const;
    const analyst = [await connect(one, analystToken), await connect(two, analystToken)] as const;
    const lead = [await connect(one, LEAD_TOKEN), await connect(two, LEAD_TOKEN)] as const;
    const scenarios = sandbox.world.scenarios.map((s) => s._id);
    const exportOf = (i: number) => ({
      type: "scenario_daily_metrics",
      scenario_id: scenarios[i],
      from: sandboxDay(sandbox, 10),
      to: sandboxDay(sandbox, 3),
      wait_seconds: 0,
    });

    /** Every call made, as the trail must show it: caller, tool, outcome. */
    const expected: string[] = [];
    const jobs = new Map<string, string>();
    const made = async (
      who: string,
      client: Client,
      tool: string,
      args: object,
      outcome = "ok",
    ) => {
      const result = toResult(
        await client.callTool({ name: tool, arguments: args as Record<string, unknown> }),
      );
      expect(result.isError ?? false, `${who} ${tool}: ${result.text}`).toBe(outcome !== "ok");
      expected.push(`${who} ${tool} ${outcome}`);
      const job = result.structured.job as { _id?: string } | undefined;
      if (tool === "start_export" && job?._id !== undefined) jobs.set(job._id, who);
      return result;
    };
    const denied = async (who: string, client: Client, tool: string, args: object) => {
      await expect(
        client.callTool({ name: tool, arguments: args as Record<string, unknown> }),
      ).rejects.toThrow();
      expected.push(`${who} ${tool} denied`);
    };

    // OAuth callers are named oauth:<sub>; the static token by its name.
    const first = await made("oauth:exporter", exporter[0], "start_export", exportOf(0));
    await made("oauth:exporter", exporter[1], "check_export", {
      job_id: (first.structured.job as { _id: string })._id,
    });
    await made("oauth:exporter", exporter[1], "start_export", exportOf(1));
    await made("oauth:analyst", analyst[0], "campaign_metrics", {
      task_from: sandboxDay(sandbox, 14),
      task_to: sandboxDay(sandbox, 1),
    });
    // Without job_ids or files the tool refuses its input: an error, recorded as one.
    await made("oauth:analyst", analyst[1], "query_export", {}, "error");
    await made("oauth:analyst", analyst[1], "check_export", {});
    await denied("oauth:analyst", analyst[0], "start_export", exportOf(2));
    await made("lead", lead[1], "start_export", exportOf(2));
    await made("lead", lead[0], "start_export", exportOf(3));
    await denied("lead", lead[0], "check_export", {});

    // The lists follow the scopes, on either process.
    const names = async (c: Client) => (await c.listTools()).tools.map((t) => t.name).sort();
    expect(await names(lead[0])).toEqual(["start_export"]);
    expect(await names(analyst[1])).not.toContain("start_export");
    expect(await names(exporter[0])).not.toContain("query_export");

    const { stdout } = await run(process.execPath, [BUILT_BIN, "audit", "--json"], {
      env: serviceEnv(),
    });
    const trail = JSON.parse(stdout) as Array<{
      caller: string;
      caller_kind: string;
      tool: string;
      outcome: string;
    }>;
    expect(trail.map((r) => `${r.caller} ${r.tool} ${r.outcome}`).sort()).toEqual(
      [...expected].sort(),
    );
    for (const r of trail) {
      expect(r.caller_kind, r.caller).toBe(r.caller === "lead" ? "token" : "oauth");
    }
    for (const token of [exporterToken, analystToken, LEAD_TOKEN]) {
      expect(stdout).not.toContain(token);
    }
    const lines = await run(process.execPath, [BUILT_BIN, "audit", "--caller", "lead"], {
      env: serviceEnv(),
    });
    expect(lines.stdout).toContain("3 call(s)");

    expect(jobs.size).toBe(4);
    const { default: pg } = await import("pg");
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    try {
      const rows = await pool.query<{ job_id: string; created_by: string | null }>(
        "SELECT job_id, created_by FROM crm_export_jobs",
      );
      expect(new Map(rows.rows.map((r) => [r.job_id, r.created_by]))).toEqual(jobs);
    } finally {
      await pool.end();
    }
  }, 90_000);
});
