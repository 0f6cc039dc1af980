import type { StandardSchemaWithJSON } from "@modelcontextprotocol/server";
import type { z } from "zod";

type Json = Record<string, unknown>;

/** Descriptions longer than this are cut in tools/list; the code keeps the whole text. */
const MAX_DESCRIPTION = 80;
/** From this depth on, only types: a field's object or list items are described by the field. */
const DETAIL_DEPTH = 2;

/**
 * What tools/list shows of an output schema. Every conversation pays for tools/list, and most of
 * it was output schemas (summarize_export's alone 15 KB), which a model reads far less than the
 * input side. So the result's own fields are described (type and description) while their
 * objects and list items are only typed: the contract's field lists and the description say what
 * they hold. Results are still validated against the whole zod schema.
 */
export function advertisedOutputSchema(schema: z.ZodObject): StandardSchemaWithJSON<Json> {
  const std = schema["~standard"];
  return {
    "~standard": {
      version: 1,
      vendor: "crm-insights-mcp",
      jsonSchema: {
        input: (options) => compact(std.jsonSchema.input(options), 0),
        output: (options) => compact(std.jsonSchema.output(options), 0),
      },
      validate: (value: unknown) => std.validate(value) as ReturnType<typeof std.validate> & {},
    },
  } as StandardSchemaWithJSON<Json>;
}

/** Depth 0 is the result; 1 its fields; 2 the fields of a field's object or list items. */
function compact(node: Json, depth: number): Json {
  const out: Json = {};
  const type = node.type;
  if (type !== undefined) out.type = type;
  const description = node.description;
  if (typeof description === "string" && depth <= 1) {
    out.description =
      description.length > MAX_DESCRIPTION
        ? `${description.slice(0, MAX_DESCRIPTION - 1)}…`
        : description;
  }
  if (depth >= DETAIL_DEPTH) return typeOnly(node, out);
  const properties = node.properties;
  if (depth === 0 && properties !== null && typeof properties === "object") {
    out.properties = Object.fromEntries(
      Object.entries(properties as Record<string, Json>).map(([k, v]) => [
        k,
        compact(v, depth + 1),
      ]),
    );
    if (Array.isArray(node.required) && depth === 0) out.required = node.required;
  }
  if (node.items !== null && typeof node.items === "object" && !Array.isArray(node.items)) {
    out.items = compact(node.items as Json, depth + 1);
  }
  for (const key of ["anyOf", "oneOf"] as const) {
    const options = node[key];
    if (Array.isArray(options)) out[key] = options.map((o) => compact(o as Json, depth));
  }
  if (Array.isArray(node.enum) && node.enum.length <= 12) out.enum = node.enum;
  return out;
}

/** Beyond the shared fields: the type only, so nested figures stay loose. */
function typeOnly(node: Json, out: Json): Json {
  if (out.type === undefined) {
    const options = (node.anyOf ?? node.oneOf) as Json[] | undefined;
    const types = options?.map((o) => o.type).filter((t) => typeof t === "string");
    if (types !== undefined && types.length > 0) out.type = [...new Set(types)];
  }
  return out;
}
