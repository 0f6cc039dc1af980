import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { McpServer } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { loadConfig } from "../../src/config.js";
import { getLogLevel, setLogLevel } from "../../src/log.js";
import { registerTool } from "../../src/mcp/register.js";
import { defineTool } from "../../src/mcp/tool.js";
import { registerSecret } from "../../src/redact.js";
import { createRuntime } from "../../src/runtime.js";
import { sandboxGuide } from "../../src/sandbox/embedded.js";
import { createServer } from "../../src/server.js";
import { must } from "../helpers/must.js";

let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "crm-toolcall-"));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

/** A server with one probe tool; the wrapper under test is the real registerTool. */
async function probeServer(handler: (progress: ProgressFn) => Promise<void>) {
  const config = loadConfig({
    CRM_BASE_URL: "http://127.0.0.1:9",
    CRM_APPLICATION_ID: "app",
    CRM_SECRET_KEY: "probe-secret-key-123",
    CRM_DATA_DIR: dataDir,
  });
  const runtime = createRuntime(config);
  const server = new McpServer({ name: "probe", version: "1" });
  const tool = defineTool({
    name: "probe",
    title: "Probe",
    description: "probe",
    inputSchema: z.object({}),
    outputSchema: z.object({ summary: z.string() }),
    annotations: { readOnlyHint: true },
    async handler(_args, _runtime, call) {
      await handler((p, m, t) => call.progress(p, m, t));
      return { structured: { summary: "ok" }, text: "ok" };
    },
  });
  registerTool(server, tool, runtime);
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "test", version: "1.0.0" });
  await server.connect(b);
  await client.connect(a);
  return {
    client,
    async close() {
      await client.close();
      await server.close();
      await runtime.close();
    },
  };
}
type ProgressFn = (progress: number, message: string, total?: number) => Promise<void>;

describe("tool call wrapper", () => {
  it("sends strictly increasing progress whatever values the tool passes", async () => {
    const passed = [3, 1, 1, 7, 2.5, 9];
    const probe = await probeServer(async (progress) => {
      for (const [i, p] of passed.entries()) await progress(p, `step ${i}`, i === 3 ? 4 : 10);
    });
    try {
      const seen: Array<{ progress: number; total?: number; message?: string }> = [];
      const r = await probe.client.callTool(
        { name: "probe", arguments: {} },
        { onprogress: (p) => seen.push(p) },
      );
      expect(r.isError).toBeFalsy();
      expect(seen.map((p) => p.message)).toEqual(passed.map((_, i) => `step ${i}`));
      const values = seen.map((p) => p.progress);
      for (let i = 1; i < values.length; i++) expect(values[i]).toBeGreaterThan(values[i - 1] ?? 0);
      // Increasing values are kept; the others move one past the last value sent.
      expect(values).toEqual([3, 4, 5, 7, 8, 9]);
      // A total below the value sent is left out rather than contradicted.
      expect(seen.map((p) => p.total)).toEqual([10, 10, 10, undefined, 10, 10]);
    } finally {
      await probe.close();
    }
  });

  it("logs a failed call's redacted message, not only the error's name", async () => {
    // main.ts registers the configured keys; the log must mask them.
    registerSecret("probe-secret-key-123");
    // Failed calls are logged at info; tests run at warn unless they ask.
    const level = getLogLevel();
    setLogLevel("info");
    const writes: string[] = [];
    const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      writes.push(String(chunk));
      return true;
    });
    const probe = await probeServer(async () => {
      throw new TypeError("cannot read the thing with key probe-secret-key-123");
    });
    try {
      const r = await probe.client.callTool({ name: "probe", arguments: {} });
      expect(r.isError).toBe(true);
    } finally {
      spy.mockRestore();
      setLogLevel(level);
      await probe.close();
    }
    const line = must(
      writes.find((w) => w.includes("tool call failed")),
      "tool call failed log line",
    );
    expect(line).toContain("TypeError");
    expect(line).toContain("cannot read the thing");
    expect(writes.join("")).not.toContain("probe-secret-key-123");
  });
});

describe("sandbox mode instructions", () => {
  it("list the sandbox's scenario IDs, active slot keys and users with behaviour", async () => {
    const config = loadConfig({ CRM_DATA_DIR: dataDir, CRM_SANDBOX_SEED: "7" });
    const built = createServer(config, { sandboxGuide: await sandboxGuide(config.sandbox.seed) });
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: "test", version: "1.0.0" });
    try {
      await built.server.connect(b);
      await client.connect(a);
      const instructions = must(client.getInstructions(), "server instructions");
      expect(instructions).toContain("10 export-job creations per 10 minutes");
      // What the sandbox itself reports once started, with the same seed.
      const { startSandbox } = await import("../../src/sandbox/index.js");
      const sandbox = await startSandbox({ seed: 7, now: config.sandbox.now });
      try {
        for (const id of sandbox.scenario_ids) expect(instructions).toContain(id);
        const active = sandbox.world.slots.filter((s) => s.state === "active");
        const others = sandbox.world.slots.filter((s) => s.state !== "active");
        expect(active.length).toBeGreaterThan(0);
        expect(others.length).toBeGreaterThan(0);
        for (const slot of active) expect(instructions).toContain(slot.key);
        for (const slot of others) expect(instructions).not.toContain(slot.key);
        // Every example user gets a personalized answer, not the cold-user one.
        const cold = sandbox.world.recommend("home_personalized", { limit: 10 }, 1e9);
        const users = instructions.match(/pu_\d{6}/g) ?? [];
        expect(users.length).toBeGreaterThan(0);
        for (const user of users) {
          const rec = sandbox.world.recommend(
            "home_personalized",
            { platform_user_id: user, limit: 10 },
            1e9,
          );
          expect(rec.status === 200 && cold.status === 200 && rec.item_ids, user).not.toEqual(
            cold.status === 200 ? cold.item_ids : [],
          );
        }
      } finally {
        await sandbox.close();
      }
    } finally {
      await client.close();
      await built.close();
    }
  });
});
