import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { type HttpSettings, loadHttpSettings } from "../../src/http/http-config.js";
import { type RunningHttpServer, startHttpServer } from "../../src/http/http-server.js";
import type { ToolRuntime } from "../../src/mcp/tool.js";
import { createRuntime } from "../../src/runtime.js";
import { startSandbox } from "../../src/sandbox/index.js";
import type { RunningSandbox } from "../../src/sandbox/types.js";
import { SANDBOX_NOW, sandboxClock, toResult } from "../helpers/tool-harness.js";
import { waitUntil } from "../helpers/wait-until.js";

const ALICE = "alice-token-0123456789abcdef";
const BOB = "bob-token-0123456789abcdef01";

let sandbox: RunningSandbox;
let dataDir: string;
let server: RunningHttpServer;
/** The runtime behind `server`: when it last polled each export job. */
let serverRuntime: ToolRuntime;

async function start(
  env: Record<string, string>,
  args: string[] = [],
): Promise<{ http: RunningHttpServer; runtime: ToolRuntime }> {
  const config = loadConfig({
    CRM_BASE_URL: sandbox.base_url,
    CRM_APPLICATION_ID: sandbox.application_id,
    CRM_SECRET_KEY: sandbox.secret_key,
    CRM_RECOMMEND_SECRET_KEY: sandbox.recommend_secret_key,
    CRM_DATA_DIR: dataDir,
    CRM_POLL_INTERVAL_SECONDS: "0.2",
  });
  const settings: HttpSettings = loadHttpSettings(["--http", "--port", "0", ...args], env);
  const runtime = createRuntime(config, { now: sandboxClock().now });
  return { http: await startHttpServer({ config, settings, runtime, version: "test" }), runtime };
}

type Era = "legacy" | "modern";

async function connect(url: string, token: string | undefined, era: Era = "legacy") {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: token === undefined ? {} : { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client(
    { name: "http-test", version: "1.0.0" },
    era === "modern" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
  );
  await client.connect(transport);
  return client;
}

function daysAgo(days: number): string {
  return new Date(Date.parse(SANDBOX_NOW) - days * 86_400_000).toISOString().slice(0, 10);
}

beforeAll(async () => {
  sandbox = await startSandbox({ now: SANDBOX_NOW, jobSeconds: 1.5 });
  dataDir = await mkdtemp(join(tmpdir(), "crm-http-"));
  ({ http: server, runtime: serverRuntime } = await start({
    CRM_HTTP_TOKENS: `alice:${ALICE},${BOB}`,
  }));
});

afterAll(async () => {
  await server?.close(1000);
  await sandbox?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe("serve --http", () => {
  for (const era of ["legacy", "modern"] as const) {
    it(`answers tool calls over both protocol eras (${era}) with progress`, async () => {
      const client = await connect(server.url, ALICE, era);
      try {
        const tools = await client.listTools();
        expect(tools.tools.map((t) => t.name)).toContain("check_export");
        const metrics = toResult(
          await client.callTool({
            name: "campaign_metrics",
            arguments: { task_from: daysAgo(14), task_to: daysAgo(1) },
          }),
        );
        expect(metrics.isError).toBeFalsy();
        expect(Array.isArray(metrics.structured.campaigns)).toBe(true);
        const progress: string[] = [];
        const started = toResult(
          await client.callTool(
            {
              name: "start_export",
              arguments: {
                type: "scenario_daily_metrics",
                scenario_id: sandbox.world.scenarios[era === "legacy" ? 0 : 1]?._id,
                from: daysAgo(10),
                to: daysAgo(3),
                wait_seconds: 20,
              },
            },
            { onprogress: (p) => progress.push(p.message ?? String(p.progress)) },
          ),
        );
        expect(started.isError).toBeFalsy();
        expect(started.structured.file_path).toBeTypeOf("string");
        // Progress notifications reached the client over the response stream before the result.
        expect(progress.some((m) => m.includes("processing") || m.includes("Downloading"))).toBe(
          true,
        );
      } finally {
        await client.close();
      }
    });
  }

  it("records the token's name, never the token, as the job's creator", async () => {
    const client = await connect(server.url, BOB);
    try {
      const started = toResult(
        await client.callTool({
          name: "start_export",
          arguments: {
            type: "scenario_daily_metrics",
            scenario_id: sandbox.world.scenarios[2]?._id,
            from: daysAgo(9),
            to: daysAgo(2),
            wait_seconds: 0,
          },
        }),
      );
      expect(started.isError).toBeFalsy();
      const id = (started.structured.job as { _id: string })._id;
      const listed = toResult(await client.callTool({ name: "check_export", arguments: {} }));
      const jobs = listed.structured.jobs as Array<{ job_id?: string; _id?: string }>;
      expect(JSON.stringify(jobs)).toContain(id);
      const entry = JSON.stringify(
        toResult(await client.callTool({ name: "check_export", arguments: { job_id: id } })),
      );
      expect(entry).not.toContain(BOB);
    } finally {
      await client.close();
    }
  });

  it("stops a cancelled call's work on the server (modern and legacy)", async () => {
    for (const era of ["legacy", "modern"] as const) {
      const client = await connect(server.url, ALICE, era);
      try {
        const known = new Set(serverRuntime.lastPolledAt.keys());
        const controller = new AbortController();
        const call = client.callTool(
          {
            name: "start_export",
            arguments: {
              type: "scenario_daily_metrics",
              scenario_id: sandbox.world.scenarios[0]?._id,
              from: daysAgo(era === "legacy" ? 30 : 40),
              to: daysAgo(era === "legacy" ? 25 : 35),
              wait_seconds: 30,
              force: true,
            },
          },
          { signal: controller.signal },
        );
        call.catch(() => undefined);
        const before = sandbox.faults.requestCounts.get_export_job;
        // Polls every 0.2 s once the job exists.
        await waitUntil(
          () => sandbox.faults.requestCounts.get_export_job >= before + 2,
          "two polls of the job",
        );
        const cancelled = [...serverRuntime.lastPolledAt.keys()].find((id) => !known.has(id));
        expect(cancelled).toBeDefined();
        controller.abort();
        await expect(call).rejects.toThrow();
        await waitUntil(() => server.inFlight() === 0, "the cancelled call to end on the server");
        const lastPoll = serverRuntime.lastPolledAt.get(cancelled as string);
        // A call made afterwards polls its own job at the same interval until it completes (the
        // job takes 1.5 s): had the cancelled call's loop lived on, it would have polled meanwhile.
        const after = toResult(
          await client.callTool({
            name: "start_export",
            arguments: {
              type: "scenario_daily_metrics",
              scenario_id: sandbox.world.scenarios[0]?._id,
              from: daysAgo(era === "legacy" ? 50 : 60),
              to: daysAgo(era === "legacy" ? 45 : 55),
              wait_seconds: 20,
              force: true,
            },
          }),
        );
        expect(after.isError).toBeFalsy();
        expect(after.structured.file_path).toBeTypeOf("string");
        // No poll after the cancellation: the tool call on the server stopped.
        expect({ era, lastPoll: serverRuntime.lastPolledAt.get(cancelled as string) }).toEqual({
          era,
          lastPoll,
        });
      } finally {
        await client.close();
      }
    }
  });

  it("refuses requests without a valid token with 401", async () => {
    const none = await post(server.url, initialize(), {});
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(/^Bearer/);
    const wrong = await post(server.url, initialize(), {
      Authorization: `Bearer ${ALICE.slice(0, -1)}x`,
    });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).not.toContain(ALICE);
    await expect(connect(server.url, undefined)).rejects.toThrow();
    const ok = await post(server.url, initialize(), { Authorization: `Bearer ${ALICE}` });
    expect(ok.status).toBe(200);
  });

  it("refuses a foreign Origin and a foreign Host (DNS rebinding)", async () => {
    const auth = { Authorization: `Bearer ${ALICE}` };
    const foreign = await post(server.url, initialize(), {
      ...auth,
      Origin: "https://evil.example",
    });
    expect(foreign.status).toBe(403);
    // A page on another loopback port is another site: only CRM_HTTP_ALLOWED_ORIGINS lets it in.
    const local = await post(server.url, initialize(), {
      ...auth,
      Origin: "http://localhost:5173",
    });
    expect(local.status).toBe(403);
    const rebound = await rawRequest(
      server.port,
      "evil.example",
      JSON.stringify(initialize()),
      auth,
    );
    expect(rebound.status).toBe(403);
  });

  it("refuses oversized bodies with 413, announced or streamed", async () => {
    const auth = { Authorization: `Bearer ${ALICE}` };
    const big = { ...initialize(), params: { ...initialize().params, pad: "x".repeat(1_200_000) } };
    const announced = await post(server.url, big, auth);
    expect(announced.status).toBe(413);
    const chunked = await post(server.url, big, auth, true);
    expect(chunked.status).toBe(413);
  });

  it("answers /health and 404 elsewhere", async () => {
    const health = await fetch(server.url.replace(/\/mcp$/, "/health"));
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: "ok", ledger: "file" });
    const other = await fetch(server.url.replace(/\/mcp$/, "/other"));
    expect(other.status).toBe(404);
  });

  it("refuses requests beyond the concurrency limit and lets running calls finish on shutdown", async () => {
    const { http: small } = await start({ CRM_HTTP_TOKENS: ALICE, CRM_HTTP_MAX_CONCURRENT: "1" });
    const client = await connect(small.url, ALICE);
    const running = client.callTool({
      name: "start_export",
      arguments: {
        type: "scenario_daily_metrics",
        scenario_id: sandbox.world.scenarios[0]?._id,
        from: daysAgo(20),
        to: daysAgo(15),
        wait_seconds: 20,
        force: true,
      },
    });
    await waitUntil(() => small.inFlight() === 1, "the running call on the small server");
    const busy = await post(small.url, initialize(), { Authorization: `Bearer ${ALICE}` });
    expect(busy.status).toBe(503);
    expect(busy.headers.get("retry-after")).toBe("1");
    // Shutdown waits for the running call (the job takes 1.5 s), then closes.
    const closing = small.close(15_000);
    const result = toResult(await running);
    expect(result.isError).toBeFalsy();
    expect(result.structured.file_path).toBeTypeOf("string");
    await closing;
    await expect(fetch(small.url.replace(/\/mcp$/, "/health"))).rejects.toThrow();
    await client.close().catch(() => undefined);
  });

  it("refuses to start on a non-loopback host without tokens, and bad tokens", () => {
    expect(() => loadHttpSettings(["--http", "--host", "0.0.0.0"], {})).toThrow(/without tokens/);
    expect(() =>
      loadHttpSettings(["--http", "--host", "0.0.0.0"], { CRM_HTTP_TOKENS: "short" }),
    ).toThrow(/at least 16/);
    expect(() => loadHttpSettings(["--port", "1"], {})).toThrow(/needs --http/);
    const settings = loadHttpSettings(["--http", "--host", "0.0.0.0"], {
      CRM_HTTP_TOKENS: `alice:${ALICE}, ${BOB}`,
    });
    expect(settings.tokens.map((t) => t.name)).toEqual([
      "alice",
      expect.stringMatching(/^token-[0-9a-f]{8}$/),
    ]);
    expect(JSON.stringify(settings.tokens)).not.toContain(ALICE);
  });
});

function initialize() {
  return {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "raw", version: "1" },
    },
  };
}

async function post(
  url: string,
  body: unknown,
  headers: Record<string, string>,
  stream = false,
): Promise<Response> {
  const text = JSON.stringify(body);
  const init: RequestInit & { duplex?: "half" } = {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      ...headers,
    },
    body: stream
      ? new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(text));
            controller.close();
          },
        })
      : text,
  };
  if (stream) init.duplex = "half";
  return fetch(url, init);
}

/** A request with a Host header fetch would not let us set. */
async function rawRequest(
  port: number,
  host: string,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number }> {
  const { request } = await import("node:http");
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path: "/mcp",
        method: "POST",
        headers: {
          Host: host,
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
          ...headers,
        },
      },
      (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0 });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}
