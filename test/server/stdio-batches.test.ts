import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { must } from "../helpers/must.js";
import { waitUntil } from "../helpers/wait-until.js";

/**
 * JSON-RPC batches over stdio, written as raw lines to the built bin: answered with one array
 * once MCP 2025-03-26 is negotiated (that version requires receiving batches), refused with one
 * Invalid Request error under any other version.
 */

const BIN = fileURLToPath(new URL("../../dist/cli.js", import.meta.url));

type Message = Record<string, unknown>;

interface Bin {
  child: ChildProcessWithoutNullStreams;
  /** Every stdout line, parsed. */
  lines: unknown[];
  write(...messages: unknown[]): void;
  /** The first line (at or after `from`) that `match` accepts. */
  next(match: (line: unknown) => boolean, from?: number): Promise<unknown>;
}

const started: Array<{ bin: Bin; dir: string }> = [];

afterEach(async () => {
  for (const { bin, dir } of started.splice(0)) {
    if (bin.child.exitCode === null) {
      const exited = new Promise((resolve) => bin.child.once("exit", resolve));
      bin.child.stdin.end();
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  }
});

async function startBin(): Promise<Bin> {
  if (!existsSync(BIN)) throw new Error("dist/cli.js missing: run npm run build");
  const dir = await mkdtemp(join(tmpdir(), "crm-stdio-batch-"));
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("CRM_")),
  );
  const child = spawn(process.execPath, [BIN], {
    env: {
      ...env,
      CRM_DATA_DIR: dir,
      CRM_LOG_LEVEL: "warn",
      // An export stays in processing long enough to be cancelled mid-call; the sandbox's
      // clock is pinned, so the export's dates lie in its past whatever today is.
      CRM_SANDBOX_JOB_SECONDS: "60",
      CRM_SANDBOX_NOW: "2026-11-22T09:00:00+09:00",
    },
  });
  const lines: unknown[] = [];
  let rest = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    const parts = (rest + chunk).split("\n");
    rest = must(parts.pop(), "text after the last newline");
    for (const part of parts) lines.push(JSON.parse(part));
  });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => {
    stderr += chunk;
  });
  const bin: Bin = {
    child,
    lines,
    write: (...messages) => {
      for (const m of messages) child.stdin.write(`${JSON.stringify(m)}\n`);
    },
    async next(match, from = 0) {
      let found: unknown;
      await waitUntil(
        () => {
          found = lines.slice(from).find(match);
          return found !== undefined;
        },
        `a matching line from the bin (stderr: ${stderr.slice(-500)})`,
        { timeoutMs: 20_000 },
      );
      return found;
    },
  };
  started.push({ bin, dir });
  return bin;
}

function request(id: number, method: string, params: Message = {}): Message {
  return { jsonrpc: "2.0", id, method, params };
}

function initialize(id: number, protocolVersion: string): Message {
  return request(id, "initialize", {
    protocolVersion,
    capabilities: {},
    clientInfo: { name: "raw-lines", version: "1" },
  });
}

const idOf = (line: unknown) => (line as Message).id;
const hasId = (id: number) => (line: unknown) => !Array.isArray(line) && idOf(line) === id;

describe("JSON-RPC batches over stdio", () => {
  it("answers a batch with one array after 2025-03-26 is negotiated", async () => {
    const bin = await startBin();
    // Written at once: the batch waits for initialize's answer, which decides the version.
    bin.write(
      initialize(1, "2025-03-26"),
      { jsonrpc: "2.0", method: "notifications/initialized" },
      [
        request(2, "ping"),
        request(3, "tools/list"),
        { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 999 } },
        { not: "a message" },
        initialize(4, "2025-03-26"),
      ],
    );
    const init = (await bin.next(hasId(1))) as { result: { protocolVersion: string } };
    expect(init.result.protocolVersion).toBe("2025-03-26");
    const batch = (await bin.next(Array.isArray)) as Message[];
    const byId = new Map(batch.map((m) => [m.id, m]));
    expect([...byId.keys()].sort()).toEqual([2, 3, 4, null].sort());
    expect(byId.get(2)).toMatchObject({ result: {} });
    const tools = (byId.get(3) as { result: { tools: Array<{ name: string }> } }).result.tools;
    expect(tools.map((t) => t.name)).toContain("query_export");
    expect(byId.get(4)).toMatchObject({
      error: { code: -32600, message: expect.stringContaining("initialize cannot be part") },
    });
    expect(byId.get(null)).toMatchObject({
      error: { code: -32600, message: expect.stringContaining("message 4 of the batch") },
    });
    // Each request was answered in the array only, never on a line of its own.
    expect(
      bin.lines.filter((l) => !Array.isArray(l) && [2, 3, 4].includes(idOf(l) as number)),
    ).toEqual([]);

    // A batch of notifications only gets no answer; single messages work as before; an empty
    // batch is one Invalid Request.
    const before = bin.lines.length;
    bin.write([{ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } }]);
    bin.write([]);
    bin.write(request(5, "ping"));
    await bin.next(hasId(5), before);
    const after = bin.lines.slice(before);
    expect(after).toEqual([
      {
        jsonrpc: "2.0",
        id: null,
        error: { code: -32600, message: expect.stringContaining("the batch is empty") },
      },
      expect.objectContaining({ id: 5, result: {} }),
    ]);
  });

  it("leaves a cancelled request out of its batch's array", async () => {
    const bin = await startBin();
    bin.write(initialize(1, "2025-03-26"));
    const init = (await bin.next(hasId(1))) as { result: { instructions: string } };
    const scenario = /scn_[0-9a-f]{12}/.exec(init.result.instructions)?.[0];
    expect(scenario).toBeDefined();
    bin.write({ jsonrpc: "2.0", method: "notifications/initialized" }, [
      request(2, "tools/call", {
        name: "start_export",
        arguments: {
          type: "scenario_daily_metrics",
          scenario_id: scenario,
          from: "2026-11-01",
          to: "2026-11-07",
          wait_seconds: 30,
        },
        _meta: { progressToken: "export" },
      }),
      request(3, "ping"),
    ]);
    // The call is running (its first progress notification went out on a line of its own).
    await bin.next((l) => (l as Message).method === "notifications/progress");
    bin.write({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 2 } });
    const batch = (await bin.next(Array.isArray)) as Message[];
    expect(batch).toEqual([expect.objectContaining({ id: 3, result: {} })]);
  });

  it("refuses a batch under any other version, with one Invalid Request error", async () => {
    const bin = await startBin();
    bin.write(initialize(1, "2025-06-18"));
    const init = (await bin.next(hasId(1))) as { result: { protocolVersion: string } };
    expect(init.result.protocolVersion).toBe("2025-06-18");
    const before = bin.lines.length;
    bin.write([request(2, "ping"), request(3, "ping")], request(4, "ping"));
    await bin.next(hasId(4), before);
    expect(bin.lines.slice(before)).toEqual([
      {
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32600,
          message:
            "Invalid Request: JSON-RPC batches exist only in MCP protocol version 2025-03-26, and this connection uses 2025-06-18; send each message on a line of its own.",
        },
      },
      expect.objectContaining({ id: 4, result: {} }),
    ]);
  });
});
