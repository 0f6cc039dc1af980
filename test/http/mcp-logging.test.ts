import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { LOG_LEVEL_META_KEY } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningHttpServer } from "../../src/http/http-server.js";
import { type HttpUnderTest, httpUnderTest, postJson, rpcMessages } from "./http-under-test.js";

/**
 * MCP logging over stateless HTTP: every request is served by a new server instance, yet the
 * level a 2025-era caller sets with logging/setLevel holds for its later requests, per caller; a
 * 2026-07-28 client sends its level with each request.
 */

const ALICE = "alice-token-0123456789abcdef";
const BOB = "bob-token-0123456789abcdef01";

let env: HttpUnderTest;
let server: RunningHttpServer;
let nextId = 1;

beforeAll(async () => {
  env = await httpUnderTest();
  server = await env.start({ CRM_HTTP_TOKENS: `alice:${ALICE},bob:${BOB}` });
});

afterAll(async () => {
  await env?.close();
});

async function send(token: string, method: string, params: Record<string, unknown>) {
  const response = await postJson(
    server.url,
    { jsonrpc: "2.0", id: nextId++, method, params },
    { Authorization: `Bearer ${token}`, "MCP-Protocol-Version": "2025-06-18" },
  );
  expect(response.status).toBe(200);
  return rpcMessages(response);
}

/** The levels of the log messages a tool call sent its caller before the result. */
async function callLogLevels(token: string): Promise<string[]> {
  const messages = await send(token, "tools/call", { name: "check_export", arguments: {} });
  const result = messages.find((m) => "result" in m);
  expect(result).toBeDefined();
  return messages
    .filter((m) => m.method === "notifications/message")
    .map((m) => (m.params as { level: string }).level);
}

describe("logging/setLevel over stateless HTTP", () => {
  it("holds for the caller's later requests, and only for that caller", async () => {
    // Without a level set, the server sends what it logs, its debug lines included.
    expect(await callLogLevels(ALICE)).toContain("debug");

    expect(await send(ALICE, "logging/setLevel", { level: "warning" })).toEqual([
      expect.objectContaining({ result: {} }),
    ]);
    const afterWarning = await callLogLevels(ALICE);
    expect(afterWarning.filter((l) => l === "debug" || l === "info")).toEqual([]);
    // Another token is another caller.
    expect(await callLogLevels(BOB)).toContain("debug");

    await send(ALICE, "logging/setLevel", { level: "debug" });
    expect(await callLogLevels(ALICE)).toContain("debug");
  });
});

describe("the 2026-07-28 protocol", () => {
  it("sends each request's log messages at the level that request carries", async () => {
    const client = new Client(
      { name: "modern", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { Authorization: `Bearer ${BOB}` } },
      }),
    );
    try {
      const levels: string[] = [];
      client.setNotificationHandler("notifications/message", (n) => {
        levels.push(n.params.level);
      });
      const call = (level: string) =>
        client.callTool({
          name: "check_export",
          arguments: {},
          _meta: { [LOG_LEVEL_META_KEY]: level },
        });
      await call("warning");
      expect(levels.filter((l) => l === "debug" || l === "info")).toEqual([]);
      await call("debug");
      expect(levels).toContain("debug");
    } finally {
      await client.close();
    }
  });
});
