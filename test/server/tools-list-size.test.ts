import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { createServer } from "../../src/server.js";

/**
 * What every conversation pays before its first question: tools/list. Claude Code passes the
 * model names, descriptions and input schemas; other clients also keep output schemas and
 * annotations. Ceilings, measured in bytes of JSON as sent.
 */
const WHOLE_LIST_MAX_BYTES = 20_000;
const MODEL_FACING_MAX_BYTES = 8_000;
/** sentry-mcp flags a tool over 1,000 tokens; ours stay well under (about 3.5 bytes a token). */
const ONE_TOOL_MODEL_FACING_MAX_BYTES = 2_000;

let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "crm-list-size-"));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe("tools/list size", () => {
  it("stays under its ceilings, whole and for the model", async () => {
    const built = createServer(loadConfig({ CRM_DATA_DIR: dataDir }));
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: "test", version: "1.0.0" });
    await built.server.connect(b);
    await client.connect(a);
    try {
      const { tools } = await client.listTools();
      expect(tools.length).toBeGreaterThanOrEqual(5);
      const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
      const modelFacing = tools.map((t) => ({
        name: t.name,
        description: t.description,
        inputSchema: t.inputSchema,
      }));
      const sizes = Object.fromEntries(modelFacing.map((t) => [t.name, bytes(t)]));
      expect(bytes({ tools }), JSON.stringify(sizes)).toBeLessThanOrEqual(WHOLE_LIST_MAX_BYTES);
      expect(bytes(modelFacing), JSON.stringify(sizes)).toBeLessThanOrEqual(MODEL_FACING_MAX_BYTES);
      for (const [name, size] of Object.entries(sizes)) {
        expect(size, name).toBeLessThanOrEqual(ONE_TOOL_MODEL_FACING_MAX_BYTES);
      }
    } finally {
      await client.close();
      await built.close();
    }
  });
});
