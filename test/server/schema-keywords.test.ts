import { describe, expect, it } from "vitest";
import { listedTools } from "../helpers/listed-tools.js";

/**
 * Every property of every advertised input and output schema says what it accepts: a type or
 * another validation keyword. A bare `{}` (or one with only a description) accepts anything, and
 * the MCP Inspector's --strict mode warns about each one; clients that generate types from the
 * schema get `unknown` there.
 */
const VALIDATION_KEYWORDS = ["type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "not"];

type Json = Record<string, unknown>;

/** Paths of the schema's property, item and branch schemas that have no validation keyword. */
function looseSchemas(schema: Json, path = "#"): string[] {
  const loose: string[] = [];
  const visit = (node: unknown, at: string) => {
    if (node === null || typeof node !== "object" || Array.isArray(node)) return;
    const n = node as Json;
    if (at !== path && !VALIDATION_KEYWORDS.some((k) => k in n)) loose.push(at);
    for (const [name, child] of Object.entries((n.properties as Json | undefined) ?? {})) {
      visit(child, `${at}/properties/${name}`);
    }
    if (n.additionalProperties !== null && typeof n.additionalProperties === "object") {
      visit(n.additionalProperties, `${at}/additionalProperties`);
    }
    if (Array.isArray(n.items)) {
      for (const [i, item] of n.items.entries()) visit(item, `${at}/items/${i}`);
    } else visit(n.items, `${at}/items`);
    for (const key of ["anyOf", "oneOf", "allOf"]) {
      const options = n[key];
      if (!Array.isArray(options)) continue;
      for (const [i, option] of options.entries()) visit(option, `${at}/${key}/${i}`);
    }
    for (const [name, child] of Object.entries((n.$defs as Json | undefined) ?? {})) {
      visit(child, `${at}/$defs/${name}`);
    }
  };
  visit(schema, path);
  return loose;
}

describe("advertised schemas", () => {
  it("give every property a type or validation keyword (Inspector --strict)", async () => {
    const tools = await listedTools();
    expect(tools.length).toBeGreaterThanOrEqual(5);
    const loose = tools.flatMap((tool) => [
      ...looseSchemas(tool.inputSchema as Json).map((p) => `${tool.name} input ${p}`),
      ...(tool.outputSchema === undefined
        ? [`${tool.name}: no output schema`]
        : looseSchemas(tool.outputSchema as Json).map((p) => `${tool.name} output ${p}`)),
    ]);
    expect(loose).toEqual([]);
  });

  it("finds a property without a keyword, at any depth", () => {
    expect(
      looseSchemas({
        type: "object",
        properties: {
          ok: { type: "string" },
          bare: { description: "anything" },
          list: { type: "array", items: {} },
          either: { anyOf: [{ type: "null" }, { description: "x" }] },
          nested: { type: "object", properties: { deep: {} } },
        },
      }),
    ).toEqual([
      "#/properties/bare",
      "#/properties/list/items",
      "#/properties/either/anyOf/1",
      "#/properties/nested/properties/deep",
    ]);
  });
});
