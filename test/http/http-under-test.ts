import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config.js";
import { loadHttpSettings } from "../../src/http/http-config.js";
import { type RunningHttpServer, startHttpServer } from "../../src/http/http-server.js";
import { createRuntime } from "../../src/runtime.js";
import { startSandbox } from "../../src/sandbox/index.js";
import type { RunningSandbox } from "../../src/sandbox/types.js";
import { SANDBOX_NOW, sandboxClock } from "../helpers/tool-harness.js";

/**
 * `serve --http` in this process against a sandbox on loopback, each server with its own data
 * folder; `close` stops every server it started, the sandbox, and removes the folders.
 */
export interface HttpUnderTest {
  sandbox: RunningSandbox;
  start(env: Record<string, string>, args?: string[]): Promise<RunningHttpServer>;
  close(): Promise<void>;
}

export async function httpUnderTest(): Promise<HttpUnderTest> {
  const sandbox = await startSandbox({ now: SANDBOX_NOW, jobSeconds: 1.5 });
  const servers: RunningHttpServer[] = [];
  const folders: string[] = [];
  return {
    sandbox,
    async start(env, args = []) {
      const dataDir = await mkdtemp(join(tmpdir(), "crm-http-"));
      folders.push(dataDir);
      const config = loadConfig({
        CRM_BASE_URL: sandbox.base_url,
        CRM_APPLICATION_ID: sandbox.application_id,
        CRM_SECRET_KEY: sandbox.secret_key,
        CRM_RECOMMEND_SECRET_KEY: sandbox.recommend_secret_key,
        CRM_DATA_DIR: dataDir,
      });
      const settings = loadHttpSettings(["--http", "--port", "0", ...args], env);
      const runtime = createRuntime(config, { now: sandboxClock().now });
      const server = await startHttpServer({ config, settings, runtime, version: "test" });
      servers.push(server);
      return server;
    },
    async close() {
      await Promise.allSettled(servers.map((s) => s.close(1000)));
      await sandbox.close();
      await Promise.all(folders.map((f) => rm(f, { recursive: true, force: true })));
    },
  };
}

/** An `initialize` request of the 2025 era, as raw JSON-RPC. */
export function initializeRequest(protocolVersion = "2025-06-18") {
  return {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion, capabilities: {}, clientInfo: { name: "raw", version: "1" } },
  };
}

/** A JSON-RPC POST to `/mcp` with the headers the Streamable HTTP transport requires. */
export function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

/** The JSON-RPC messages of a response, whether sent as JSON or as an SSE stream. */
export async function rpcMessages(response: Response): Promise<Array<Record<string, unknown>>> {
  const text = await response.text();
  if (!(response.headers.get("content-type") ?? "").includes("text/event-stream")) {
    return text === "" ? [] : [JSON.parse(text) as Record<string, unknown>];
  }
  return text
    .split("\n")
    .filter((line) => line.startsWith("data:") && line.slice(5).trim() !== "")
    .map((line) => JSON.parse(line.slice(5)) as Record<string, unknown>);
}
