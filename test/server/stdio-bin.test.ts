import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { DateTime } from "luxon";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/index.js";
import type { RunningSandbox } from "../../src/sandbox/types.js";
import { must } from "../helpers/must.js";
import { childRunEnv } from "../setup/temp-folder.js";

const BIN = new URL("../../dist/cli.js", import.meta.url);
const CANARY = "canary-secret-7f3a9c1e5b";
const CANARY_REC = "canary-recommend-2d8e4f6a";

let sandbox: RunningSandbox;
let dataDir: string;
beforeAll(async () => {
  if (!existsSync(BIN))
    throw new Error("dist/cli.js missing: run npm run build (vitest does for this file)");
  // The export/metrics key is the canary; the recommend key the server gets is wrong on purpose
  // (another canary), so an authentication error path runs too.
  // No pinned clock: the bin (remote mode) checks download-URL expiry against the real clock,
  // so a sandbox pinned to a fixed date would hand out URLs that expire as the calendar moves.
  sandbox = await startSandbox({ jobSeconds: 0.3, secretKey: CANARY });
  dataDir = await mkdtemp(join(tmpdir(), "crm-stdio-"));
});
afterAll(async () => {
  await sandbox?.close();
  await rm(dataDir, { recursive: true, force: true });
});

/**
 * `YYYY-MM-DD` of n days before the sandbox's start in KST (the sandbox application's zone):
 * counted from the sandbox's clock rather than read again now, so a run that crosses midnight in
 * Seoul still asks for days of the sandbox's data.
 */
function daysAgo(n: number): string {
  return DateTime.fromMillis(sandbox.world.now, { zone: "Asia/Seoul" })
    .minus({ days: n })
    .toISODate() as string;
}

class LineClient {
  readonly lines: string[] = [];
  stderr = "";
  private buffer = "";
  private waiters = new Map<number, (msg: Record<string, unknown>) => void>();
  private nextId = 1;
  constructor(readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      this.buffer += chunk;
      let nl = this.buffer.indexOf("\n");
      while (nl >= 0) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        this.lines.push(line);
        try {
          const msg = JSON.parse(line) as Record<string, unknown>;
          if (typeof msg.id === "number") this.waiters.get(msg.id)?.(msg);
        } catch {
          // Kept in `lines`; the test asserts every line parses.
        }
        nl = this.buffer.indexOf("\n");
      }
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      this.stderr += chunk;
    });
  }
  request(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    const answer = new Promise<Record<string, unknown>>((resolve) => this.waiters.set(id, resolve));
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    return answer;
  }
  notify(method: string): void {
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method })}\n`);
  }
}

describe("the built bin over stdio", () => {
  it("answers every tool with JSON-RPC lines only and never prints a key", async () => {
    const child = spawn(process.execPath, [BIN.pathname], {
      env: {
        PATH: process.env.PATH,
        ...childRunEnv(),
        CRM_BASE_URL: sandbox.base_url,
        CRM_APPLICATION_ID: sandbox.application_id,
        CRM_SECRET_KEY: CANARY,
        CRM_RECOMMEND_SECRET_KEY: CANARY_REC,
        CRM_DATA_DIR: dataDir,
        CRM_POLL_INTERVAL_SECONDS: "0.2",
        CRM_LOG_LEVEL: "debug",
      },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const client = new LineClient(child);
    try {
      const init = await client.request("initialize", {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "stdio-test", version: "1.0.0" },
      });
      expect((init.result as Record<string, unknown>).instructions).toBeTypeOf("string");
      client.notify("notifications/initialized");
      const list = await client.request("tools/list", {});
      const names = ((list.result as { tools: Array<{ name: string }> }).tools ?? []).map(
        (t) => t.name,
      );
      expect([...names].sort()).toEqual([
        "campaign_metrics",
        "check_export",
        "query_export",
        "recommend_products",
        "start_export",
        "summarize_export",
      ]);

      const call = async (name: string, args: Record<string, unknown>) =>
        (await client.request("tools/call", { name, arguments: args })).result as {
          isError?: boolean;
          structuredContent?: Record<string, unknown>;
          content: Array<{ text?: string }>;
        };
      const metrics = await call("campaign_metrics", {
        task_from: daysAgo(21),
        task_to: daysAgo(1),
        top_n: 3,
      });
      expect(metrics.isError).toBeFalsy();
      const scenario = sandbox.world.scenarios[0]?._id;
      const started = await call("start_export", {
        type: "scenario_daily_metrics",
        scenario_id: scenario,
        from: daysAgo(21),
        to: daysAgo(12),
        wait_seconds: 10,
      });
      expect(started.isError).toBeFalsy();
      const jobId = (started.structuredContent?.job as { _id: string } | undefined)?._id;
      const checked = await call("check_export", { job_id: jobId, wait_seconds: 0 });
      expect(checked.structuredContent?.file_path).toBeTypeOf("string");
      const listed = await call("check_export", {});
      expect((listed.structuredContent?.jobs as unknown[] | undefined)?.length).toBe(1);
      const rec = await call("recommend_products", { slot_key: "best_sellers" });
      expect(rec.isError).toBe(true);
      expect(rec.content[0]?.text).toContain("CRM_RECOMMEND_SECRET_KEY");
      const invalid = await call("start_export", { type: "campaign_event_data" });
      expect(invalid.isError).toBe(true);
      const summary = await call("summarize_export", { job_id: jobId });
      expect(summary.isError, summary.content[0]?.text).toBeFalsy();
      expect(summary.structuredContent?.kind).toBe("scenario_daily_metrics");
      // DuckDB, loaded on this first query, reads the same workbook's nodes.
      const query = await call("query_export", {
        job_ids: [jobId],
        sql: "SELECT count(*), count(DISTINCT node_id) FROM scenario_nodes",
      });
      expect(query.isError, query.content[0]?.text).toBeFalsy();
      const nodes = (summary.structuredContent?.nodes as unknown[] | undefined)?.length;
      expect(query.structuredContent?.rows).toEqual([[nodes, nodes]]);
    } finally {
      child.stdin.end();
      await new Promise((resolve) => {
        // A guard, not a wait: kills a server that does not exit, and the test then fails below.
        const timer = setTimeout(() => {
          child.kill("SIGKILL");
        }, 5000);
        child.once("exit", () => {
          clearTimeout(timer);
          resolve(undefined);
        });
      });
    }
    // stdin closed: the server exited by itself (not killed).
    expect(child.signalCode).toBeNull();
    for (const line of client.lines.filter((l) => l !== "")) {
      const msg = JSON.parse(line) as Record<string, unknown>;
      expect(msg.jsonrpc).toBe("2.0");
    }
    const everything = [client.lines.join("\n"), client.stderr];
    for (const name of await readdir(dataDir, { recursive: true })) {
      if (name.endsWith(".json")) everything.push(await readFile(join(dataDir, name), "utf8"));
    }
    for (const text of everything) {
      expect(text).not.toContain(CANARY);
      expect(text).not.toContain(CANARY_REC);
      expect(text).not.toMatch(/signature=[0-9a-f]{16}/);
    }
  });

  it("serves protocol revision 2026-07-28: tools/list and a call with progress", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN.pathname],
      env: {
        PATH: must(process.env.PATH, "PATH"),
        ...childRunEnv(),
        CRM_BASE_URL: sandbox.base_url,
        CRM_APPLICATION_ID: sandbox.application_id,
        CRM_SECRET_KEY: CANARY,
        CRM_DATA_DIR: dataDir,
        CRM_POLL_INTERVAL_SECONDS: "0.2",
        CRM_LOG_LEVEL: "warn",
      },
      stderr: "pipe",
    });
    const client = new Client(
      { name: "stdio-2026", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    try {
      await client.connect(transport);
      expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([
        "campaign_metrics",
        "check_export",
        "query_export",
        "recommend_products",
        "start_export",
        "summarize_export",
      ]);
      const progress: number[] = [];
      // A job that takes a few polls (the sandbox holds it for 0.3 s, polled every 0.2 s).
      const result = (await client.callTool(
        {
          name: "start_export",
          arguments: {
            type: "scenario_daily_metrics",
            scenario_id: sandbox.scenario_ids[1],
            from: daysAgo(30),
            to: daysAgo(2),
            wait_seconds: 10,
            force: true,
          },
        },
        { onprogress: (p) => progress.push(p.progress) },
      )) as { isError?: boolean; structuredContent?: Record<string, unknown> };
      expect(result.isError).toBeFalsy();
      expect((result.structuredContent?.job as { status?: string } | undefined)?.status).toBe(
        "completed",
      );
      expect(progress.length).toBeGreaterThan(0);
      for (let i = 1; i < progress.length; i++) {
        expect(progress[i]).toBeGreaterThan(progress[i - 1] ?? Number.NEGATIVE_INFINITY);
      }
    } finally {
      await client.close();
    }
  });
});
