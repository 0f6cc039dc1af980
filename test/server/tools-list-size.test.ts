import { describe, expect, it } from "vitest";
import { listedTools } from "../helpers/listed-tools.js";

/**
 * What every conversation pays before its first question: tools/list. Claude Code passes the
 * model names, descriptions and input schemas; other clients also keep output schemas and
 * annotations. Ceilings, measured in bytes of JSON as sent.
 */
const WHOLE_LIST_MAX_BYTES = 20_000;
const MODEL_FACING_MAX_BYTES = 8_500;
/** sentry-mcp flags a tool over 1,000 tokens; ours stay well under (about 3.5 bytes a token). */
const ONE_TOOL_MODEL_FACING_MAX_BYTES = 2_000;

describe("tools/list size", () => {
  it("stays under its ceilings, whole and for the model", async () => {
    const tools = await listedTools();
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
  });
});
