import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { decodeJwt, importJWK, SignJWT } from "jose";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { runAuditCommand } from "../../src/audit/cli.js";
import type { AuditRecord } from "../../src/audit/index.js";
import { loadConfig } from "../../src/config.js";
import { loadHttpSettings } from "../../src/http/http-config.js";
import { type RunningHttpServer, startHttpServer } from "../../src/http/http-server.js";
import { getLogLevel, setLogLevel } from "../../src/log.js";
import type { ToolRuntime } from "../../src/mcp/tool.js";
import { createRuntime } from "../../src/runtime.js";
import { startSandbox } from "../../src/sandbox/index.js";
import type { RunningSandbox } from "../../src/sandbox/types.js";
import { must } from "../helpers/must.js";
import { startTestProvider, type TestProvider } from "../helpers/openid-provider.js";
import { SANDBOX_NOW, sandboxClock, toResult } from "../helpers/tool-harness.js";
import { waitUntil } from "../helpers/wait-until.js";
import { initializeRequest, postJson, rpcMessages } from "./http-under-test.js";

/**
 * Callers over HTTP with both kinds of credential: the static token named `exporter` and the
 * provider's client `exporter` (whose tokens say `sub: "exporter"`) are two callers in the audit
 * trail, the ledger and the MCP log levels; an OAuth caller is found with
 * `audit --caller oauth:<name>`. A caller's name never reaches a log line raw.
 */
const STATIC_EXPORTER = "exporter-static-token-0123456789ab";

let provider: TestProvider;
let sandbox: RunningSandbox;
let dataDir: string;
let server: RunningHttpServer;
let runtime: ToolRuntime;
let nextId = 1;
const clients: Client[] = [];
const savedEnv = { ...process.env };

beforeAll(async () => {
  [provider, sandbox] = await Promise.all([
    startTestProvider(),
    startSandbox({ now: SANDBOX_NOW, jobSeconds: 1 }),
  ]);
  dataDir = await mkdtemp(join(tmpdir(), "crm-callers-"));
  const config = loadConfig(serviceEnv());
  const settings = loadHttpSettings(["--http", "--port", "0"], {
    CRM_OAUTH_ISSUER: provider.issuer,
    CRM_HTTP_TOKENS: `exporter:${STATIC_EXPORTER}`,
  });
  runtime = createRuntime(config, { now: sandboxClock().now });
  server = await startHttpServer({ config, settings, runtime, version: "test" });
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await server?.close(1000);
  await Promise.all([provider?.close(), sandbox?.close()]);
  await rm(dataDir, { recursive: true, force: true });
});

afterEach(() => {
  for (const name of Object.keys(process.env)) if (!(name in savedEnv)) delete process.env[name];
  Object.assign(process.env, savedEnv);
});

function serviceEnv(): Record<string, string> {
  return {
    CRM_BASE_URL: sandbox.base_url,
    CRM_APPLICATION_ID: sandbox.application_id,
    CRM_SECRET_KEY: sandbox.secret_key,
    CRM_RECOMMEND_SECRET_KEY: sandbox.recommend_secret_key,
    CRM_DATA_DIR: dataDir,
  };
}

async function connect(bearer: string): Promise<Client> {
  const client = new Client({ name: "callers", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
    }),
  );
  clients.push(client);
  return client;
}

async function rpc(bearer: string, method: string, params: Record<string, unknown>) {
  const response = await postJson(
    server.url,
    { jsonrpc: "2.0", id: nextId++, method, params },
    { Authorization: `Bearer ${bearer}`, "MCP-Protocol-Version": "2025-06-18" },
  );
  expect(response.status).toBe(200);
  return rpcMessages(response);
}

/** The levels of the log messages a tool call sent its caller before the result. */
async function callLogLevels(bearer: string): Promise<string[]> {
  const messages = await rpc(bearer, "tools/call", { name: "check_export", arguments: {} });
  expect(messages.some((m) => "result" in m)).toBe(true);
  return messages
    .filter((m) => m.method === "notifications/message")
    .map((m) => (m.params as { level: string }).level);
}

/** `crm-insights-mcp audit --json` with the servers' environment. */
async function auditJson(args: string[]): Promise<AuditRecord[]> {
  Object.assign(process.env, serviceEnv());
  let out = "";
  const stdout = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    out += String(chunk);
    return true;
  });
  try {
    expect(await runAuditCommand(["--json", ...args])).toBe(0);
  } finally {
    stdout.mockRestore();
  }
  return JSON.parse(out) as AuditRecord[];
}

describe("a static token and an OAuth subject of the same name", () => {
  it("are two callers in the audit trail, the ledger and the log levels", async () => {
    const oauthToken = await provider.clientCredentials(
      "exporter",
      server.url,
      "crm.read crm.export",
    );
    expect(decodeJwt(oauthToken).sub).toBe("exporter");
    const scenarios = sandbox.world.scenarios.map((s) => s._id);
    const exportOf = (scenario: string | undefined) => ({
      name: "start_export",
      arguments: {
        type: "scenario_daily_metrics",
        scenario_id: scenario,
        from: "2026-11-10",
        to: "2026-11-15",
        wait_seconds: 0,
      },
    });
    const byToken = toResult(
      await (await connect(STATIC_EXPORTER)).callTool(exportOf(scenarios[0])),
    );
    const byOAuth = toResult(await (await connect(oauthToken)).callTool(exportOf(scenarios[1])));
    expect(byToken.isError ?? false, byToken.text).toBe(false);
    expect(byOAuth.isError ?? false, byOAuth.text).toBe(false);
    const jobOf = (result: typeof byToken) => (result.structured.job as { _id: string })._id;
    expect((await runtime.ledger.get(jobOf(byToken)))?.created_by).toBe("exporter");
    expect((await runtime.ledger.get(jobOf(byOAuth)))?.created_by).toBe("oauth:exporter");

    // The static token turns its log messages down; the OAuth caller still gets every level.
    await rpc(STATIC_EXPORTER, "logging/setLevel", { level: "warning" });
    expect(await callLogLevels(STATIC_EXPORTER)).not.toContain("debug");
    expect(await callLogLevels(oauthToken)).toContain("debug");

    const asToken = await auditJson(["--caller", "exporter"]);
    expect(asToken.map((r) => `${r.caller_kind} ${r.caller} ${r.tool}`)).toEqual([
      "token exporter start_export",
      "token exporter check_export",
    ]);
    const asOAuth = await auditJson(["--caller", "oauth:exporter"]);
    expect(asOAuth.map((r) => `${r.caller_kind} ${r.caller} ${r.tool}`)).toEqual([
      "oauth oauth:exporter start_export",
      "oauth oauth:exporter check_export",
    ]);
    for (const record of asOAuth) {
      expect(record).toMatchObject({
        issuer: provider.issuer,
        subject: "exporter",
        client_id: "exporter",
      });
    }
    for (const record of asToken) expect(record.subject).toBeUndefined();
  });
});

describe("log lines", () => {
  it("show a caller's control characters escaped, never raw", async () => {
    const issued = decodeJwt(await provider.clientCredentials("reader", server.url, "crm.read"));
    const jwk = provider.signingKey();
    // C1 CSI "erase screen", a right-to-left override and CR: JSON leaves the first two raw.
    const hostile = await new SignJWT({
      iss: provider.issuer,
      aud: server.url,
      sub: "eve\u009b2J\u202e\r",
      scope: "crm.read",
      iat: issued.iat as number,
      exp: (issued.iat as number) + 300,
    })
      .setProtectedHeader({ alg: "RS256", kid: jwk.kid as string, typ: "at+jwt" })
      .sign(await importJWK(jwk, "RS256"));
    const level = getLogLevel();
    let written = "";
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      written += String(chunk);
      return true;
    });
    setLogLevel("info");
    try {
      const response = await postJson(server.url, initializeRequest(), {
        Authorization: `Bearer ${hostile}`,
      });
      expect(response.status).toBe(200);
      await response.text();
      await waitUntil(() => written.includes('"token":"oauth:eve'), "the request's log line");
    } finally {
      setLogLevel(level);
      stderr.mockRestore();
    }
    const line = must(
      written.split("\n").find((l) => l.includes('"token":"oauth:eve')),
      "audit line of eve",
    );
    expect(line).toContain('"token":"oauth:eve\\x9b2J\\u202e\\r"');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: what must not be there
    expect(written.replaceAll("\n", "")).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/);
  });
});
