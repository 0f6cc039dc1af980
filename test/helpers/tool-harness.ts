import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { createApiClient } from "../../src/api/client.js";
import { apiClientOptionsFromConfig, type Config, loadConfig } from "../../src/config.js";
import { JobLedger } from "../../src/ledger/ledger.js";
import type { ToolRuntime } from "../../src/mcp/tool.js";
import { configLedgerScope, createRuntime } from "../../src/runtime.js";
import { startSandbox } from "../../src/sandbox/index.js";
import type { RunningSandbox } from "../../src/sandbox/types.js";
import { createServer } from "../../src/server.js";

/** The sandbox clock's "today": data lies before it (2026-11-22 in KST). */
export const SANDBOX_NOW = "2026-11-22T09:00:00+09:00";

/**
 * A clock that reads like a sandbox started at SANDBOX_NOW (pinned date plus real time elapsed
 * since this call, plus an optional shift a test can change), whatever the real date is. Its
 * `now` runs slightly ahead of a sandbox started afterwards, so expiry checks stay on the safe side.
 */
export function sandboxClock(shiftMs: () => number = () => 0): {
  now: () => number;
  real: () => number;
} {
  const realStart = Date.now();
  const base = Date.parse(SANDBOX_NOW);
  return {
    now: () => base + (Date.now() - realStart) + shiftMs(),
    /** The real-time source for startSandbox's `clock` option, shifted alike. */
    real: () => Date.now() + shiftMs(),
  };
}

export interface Harness {
  sandbox: RunningSandbox;
  client: Client;
  config: Config;
  dataDir: string;
  /** The runtime of the first server (its downloads and ledger), for waiting on its state. */
  runtime: ToolRuntime;
  /**
   * Connects a second client to a fresh server on the same data folder (a restart), with `env`
   * over the first server's settings when given.
   */
  restart(env?: Record<string, string>): Promise<Client>;
  call(name: string, args: Record<string, unknown>): Promise<ToolResult>;
  close(): Promise<void>;
}

/** The ledger file the harness's server writes, opened on its own (as a second process would). */
export function openLedger(h: Pick<Harness, "config">, now: () => number = Date.now): JobLedger {
  return new JobLedger(h.config.dataDir, h.config.exportBudget, now, configLedgerScope(h.config));
}

export interface ToolResult {
  isError?: boolean;
  text: string;
  structured: Record<string, unknown>;
  content: Array<{ type: string; [key: string]: unknown }>;
}

export async function startHarness(
  options: {
    jobSeconds?: number;
    env?: Record<string, string>;
    sandbox?: RunningSandbox;
    /**
     * The sandbox's clock, for the API client (download-URL expiry) and the tools and ledger.
     * By default a clock pinned like a sandbox started now at SANDBOX_NOW (with a given
     * `sandbox`, pass its clock when the test depends on expiry).
     */
    apiNow?: () => number;
  } = {},
): Promise<Harness> {
  const clock = sandboxClock();
  const now = options.apiNow ?? clock.now;
  const sandbox =
    options.sandbox ??
    (await startSandbox({ now: SANDBOX_NOW, jobSeconds: options.jobSeconds ?? 0.4 }));
  const dataDir = await mkdtemp(join(tmpdir(), "crm-tools-"));
  const settings = {
    CRM_BASE_URL: sandbox.base_url,
    CRM_REALTIME_BASE_URL: sandbox.realtime_base_url,
    CRM_APPLICATION_ID: sandbox.application_id,
    CRM_SECRET_KEY: sandbox.secret_key,
    CRM_RECOMMEND_SECRET_KEY: sandbox.recommend_secret_key,
    CRM_DATA_DIR: dataDir,
    CRM_POLL_INTERVAL_SECONDS: "0.2",
    ...options.env,
  };
  const config = loadConfig(settings);
  const servers: Array<{ close(): Promise<void> }> = [];
  const runtimes: ToolRuntime[] = [];
  const clients: Client[] = [];
  const connect = async (env?: Record<string, string>) => {
    const serverConfig = env === undefined ? config : loadConfig({ ...settings, ...env });
    // Short retry delays keep fault-injection tests fast; the retry logic itself is the client's.
    const api = createApiClient(
      apiClientOptionsFromConfig(serverConfig, {
        retry: { attempts: 3, baseDelayMs: 10, maxDelayMs: 50 },
        now,
      }),
    );
    const built = createServer(serverConfig, { api, now });
    runtimes.push(built.runtime);
    servers.push({
      close: async () => {
        await built.close();
        await api.close();
      },
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: "test", version: "1.0.0" });
    await built.server.connect(serverSide);
    await client.connect(clientSide);
    clients.push(client);
    return client;
  };
  const client = await connect();
  const runtime = runtimes[0] as ToolRuntime;
  const call = async (name: string, args: Record<string, unknown>) =>
    toResult(await client.callTool({ name, arguments: args }));
  return {
    sandbox,
    client,
    config,
    dataDir,
    runtime,
    restart: connect,
    call,
    async close() {
      for (const c of clients) await c.close();
      for (const s of servers) await s.close();
      if (options.sandbox === undefined) await sandbox.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export function toResult(raw: unknown): ToolResult {
  const r = raw as {
    isError?: boolean;
    content?: Array<{ type: string; text?: string }>;
    structuredContent?: Record<string, unknown>;
  };
  const content = (r.content ?? []) as ToolResult["content"];
  const text = (r.content ?? [])
    .filter((c) => c.type === "text")
    .map((c) => c.text ?? "")
    .join("\n");
  return { isError: r.isError, text, structured: r.structuredContent ?? {}, content };
}

export interface RuntimeHarness {
  sandbox: RunningSandbox;
  /** Tools called directly (`tool.handler(args, runtime, call)`), without an MCP client. */
  runtime: ToolRuntime;
  /** The data folder, also free for a test's own files. */
  dir: string;
  close(): Promise<void>;
}

/**
 * A sandbox pinned at SANDBOX_NOW and a tool runtime on a fresh data folder, reading the
 * sandbox's clock (its URLs expire 24 h after its pinned date, not by the real one).
 */
export async function startRuntimeHarness(
  options: { jobSeconds?: number } = {},
): Promise<RuntimeHarness> {
  const dir = await mkdtemp(join(tmpdir(), "crm-runtime-"));
  const clock = sandboxClock();
  const sandbox = await startSandbox({ now: SANDBOX_NOW, jobSeconds: options.jobSeconds ?? 0.3 });
  const runtime = createRuntime(
    loadConfig({
      CRM_BASE_URL: sandbox.base_url,
      CRM_APPLICATION_ID: sandbox.application_id,
      CRM_SECRET_KEY: sandbox.secret_key,
      CRM_DATA_DIR: dir,
      CRM_POLL_INTERVAL_SECONDS: "0.2",
    }),
    { now: clock.now },
  );
  return {
    sandbox,
    runtime,
    dir,
    async close() {
      await runtime.close();
      await sandbox.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
