import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitUntil } from "../helpers/wait-until.js";
import { childRunEnv } from "../setup/temp-folder.js";

/**
 * Lines on stdin that are no JSON-RPC message, written raw to the built bin: each is one short
 * line on stderr, and the server goes on answering the client.
 */
const BIN = fileURLToPath(new URL("../../dist/cli.js", import.meta.url));

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "crm-stdio-malformed-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const MESSAGES = [
  {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "raw-lines", version: "1" },
    },
  },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", id: 2, method: "tools/list" },
];

describe("a malformed line on stdin", () => {
  it("is one line on stderr each, and the server keeps serving", async () => {
    const child = spawn(process.execPath, [BIN], {
      env: { PATH: process.env.PATH, HOME: dir, CRM_DATA_DIR: dir, ...childRunEnv() },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => {
      stdout += text;
    });
    child.stderr.setEncoding("utf8").on("data", (text: string) => {
      stderr += text;
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    const warnings = () => stderr.split("\n").filter((l) => l.includes("warn:"));

    const bad = [
      "hello, this is not JSON",
      '{"foo": 1}',
      '{"jsonrpc": "2.0", "id": 7}',
      '{"jsonrpc": "1.0", "id": 8, "method": "tools/list"}',
    ];
    child.stdin.write(`${bad[0]}\n${bad[1]}\n`);
    await waitUntil(() => warnings().length === 2, "two warnings", { timeoutMs: 20_000 });
    child.stdin.write(
      `${bad[2]}\n${MESSAGES.map((m) => JSON.stringify(m)).join("\n")}\n${bad[3]}\n`,
    );
    await waitUntil(() => stdout.includes('"id":2'), "the answer to tools/list", {
      timeoutMs: 20_000,
    });
    await waitUntil(() => warnings().length === 4, "four warnings", { timeoutMs: 20_000 });
    child.stdin.end();
    expect(await exited).toBe(0);

    const answers = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { id: number; result: { tools?: unknown[] } });
    expect(answers.map((a) => a.id)).toEqual([1, 2]);
    expect(answers[1]?.result.tools?.length).toBeGreaterThan(0);
    expect(warnings()).toEqual([
      `[crm-insights-mcp] warn: transport error {"error":"a line on stdin (${bad[0]?.length} bytes) is not JSON; it was ignored"}`,
      `[crm-insights-mcp] warn: transport error {"error":"a line on stdin (${bad[1]?.length} bytes) is JSON but not a JSON-RPC 2.0 message; it was ignored"}`,
      `[crm-insights-mcp] warn: transport error {"error":"a line on stdin (${bad[2]?.length} bytes) is JSON but not a JSON-RPC 2.0 message; it was ignored"}`,
      `[crm-insights-mcp] warn: transport error {"error":"a line on stdin (${bad[3]?.length} bytes) is JSON but not a JSON-RPC 2.0 message; it was ignored"}`,
    ]);
    // Nothing else: no schema dump, no stack.
    expect(stderr.split("\n").filter((l) => l !== "" && !l.includes(" info: "))).toHaveLength(4);
  });
});
