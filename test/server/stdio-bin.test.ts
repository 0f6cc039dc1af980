import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/index.js";
import type { RunningSandbox } from "../../src/sandbox/types.js";

const BIN = new URL("../../dist/cli.js", import.meta.url);
const CANARY = "canary-secret-7f3a9c1e5b";
const CANARY_REC = "canary-recommend-2d8e4f6a";

let sandbox: RunningSandbox;
let dataDir: string;
beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error("dist/cli.js missing: run npm run build (npm test does)");
  // The export/metrics key is the canary; the recommend key the server gets is wrong on purpose
  // (another canary), so an authentication error path runs too.
  sandbox = await startSandbox({
    now: "2026-11-22T09:00:00+09:00",
    jobSeconds: 0.3,
    secretKey: CANARY,
  });
  dataDir = await mkdtemp(join(tmpdir(), "crm-stdio-"));
});
afterAll(async () => {
  await sandbox?.close();
  await rm(dataDir, { recursive: true, force: true });
});

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
        PATH: process.env.PATH ?? "",
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
      expect(names).toEqual(
        expect.arrayContaining([
          "campaign_metrics",
          "start_export",
          "check_export",
          "recommend_products",
        ]),
      );

      const call = async (name: string, args: Record<string, unknown>) =>
        (await client.request("tools/call", { name, arguments: args })).result as {
          isError?: boolean;
          structuredContent?: Record<string, unknown>;
          content: Array<{ text?: string }>;
        };
      const metrics = await call("campaign_metrics", {
        task_from: "2026-11-01",
        task_to: "2026-11-21",
        top_n: 3,
      });
      expect(metrics.isError).toBeFalsy();
      const scenario = sandbox.world.scenarios[0]?._id;
      const started = await call("start_export", {
        type: "scenario_daily_metrics",
        scenario_id: scenario,
        from: "2026-11-01",
        to: "2026-11-10",
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
      if (names.includes("summarize_export")) {
        const summary = await call("summarize_export", { job_id: jobId });
        expect(summary.isError).toBeFalsy();
      }
    } finally {
      child.stdin.end();
      await new Promise((resolve) => {
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
});
