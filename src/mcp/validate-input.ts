import type { StandardSchemaWithJSON } from "@modelcontextprotocol/server";
import type { z } from "zod";
import { clipValue } from "../clip.js";
import { ToolInputError } from "./tool-errors.js";

/**
 * Tool arguments are checked here rather than by the SDK: its refusal is a bare "Input validation
 * error" without the sandbox banner, the nearest allowed name or the allowed values, and a model
 * needs exactly those to correct the call.
 */

/**
 * What the SDK gets as a tool's input schema: the tool's own JSON Schema for tools/list, and a
 * validation that passes everything through to `parseToolArgs`.
 */
export function advertisedSchema(
  schema: z.ZodObject,
): StandardSchemaWithJSON<Record<string, unknown>> {
  const std = schema["~standard"];
  return {
    "~standard": {
      version: 1,
      vendor: "crm-insights-mcp",
      // Without `$schema`: 2020-12 is MCP's default dialect, and every tools/list carries it.
      jsonSchema: {
        input: (options) => withoutDialect(std.jsonSchema.input(options)),
        output: (options) => withoutDialect(std.jsonSchema.output(options)),
      },
      validate: (value: unknown) => ({ value: (value ?? {}) as Record<string, unknown> }),
    },
  };
}

function withoutDialect(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}

/** The arguments parsed by the tool's schema, or a ToolInputError saying what to change. */
export function parseToolArgs<S extends z.ZodObject>(schema: S, args: unknown): z.output<S> {
  const parsed = schema.safeParse(args ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const allowed = Object.keys(schema.shape);
  if (issue === undefined) throw new ToolInputError("arguments", "The arguments are not valid.");
  const field = clipValue(issue.path.map(String).join(".")) || "arguments";
  const more =
    parsed.error.issues.length > 1
      ? ` (${parsed.error.issues.length - 1} more problem(s) after this one)`
      : "";
  switch (issue.code) {
    case "unrecognized_keys": {
      const parts = issue.keys.map((key) => {
        const near = nearest(key, allowed);
        return `"${clipValue(key)}"${near === undefined ? "" : ` (did you mean "${near}"?)`}`;
      });
      throw new ToolInputError(
        issue.keys.map((key) => clipValue(key)).join(", "),
        `unknown argument ${parts.join(", ")}. Allowed arguments: ${allowed.join(", ")}.${more}`,
      );
    }
    case "invalid_value":
      throw new ToolInputError(
        field,
        `${field} ${truncateJson(valueAt(args, issue.path))} is not allowed; use one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}.${more}`,
      );
    case "invalid_type": {
      const value = valueAt(args, issue.path);
      if (value === undefined) {
        throw new ToolInputError(field, `${field} is required (${issue.expected}).${more}`);
      }
      throw new ToolInputError(
        field,
        `${field} must be a ${issue.expected}, not ${describeType(value)} ${truncateJson(value)}${hint(issue.expected, value)}.${more}`,
      );
    }
    default:
      throw new ToolInputError(field, `${field}: ${issue.message}.${more}`);
  }
}

function valueAt(args: unknown, path: readonly PropertyKey[]): unknown {
  let current: unknown = args;
  for (const key of path) {
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

function truncateJson(value: unknown): string {
  return clipValue(JSON.stringify(value) ?? String(value), 60);
}

/** `"10"` for a number: say the fix (send 10 without quotes). */
function hint(expected: string, value: unknown): string {
  if (expected === "number" && typeof value === "string" && value.trim() !== "") {
    const n = Number(value);
    if (Number.isFinite(n)) return ` (write ${n} without quotes)`;
  }
  if (expected === "boolean" && (value === "true" || value === "false")) {
    return ` (write ${value} without quotes)`;
  }
  if (expected === "array" && typeof value === "string") {
    return ` (write ${JSON.stringify([value])})`;
  }
  return "";
}

/** The allowed name closest to a misspelled one, if it is plausibly what was meant. */
export function nearest(key: string, allowed: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  // Far longer than any allowed name: no misspelling of one (and the distance is quadratic).
  if (key.length > 64) return undefined;
  const lower = key.toLowerCase();
  for (const name of allowed) {
    const d = editDistance(lower, name.toLowerCase());
    if (d < bestDistance) {
      best = name;
      bestDistance = d;
    }
  }
  // A prefix or part (`id` for `job_id`, `scenario` for `scenario_id`) counts as close too.
  const contained = allowed.find(
    (name) => name.includes(lower) || lower.includes(name.toLowerCase()),
  );
  if (bestDistance <= Math.max(2, Math.floor(key.length / 3))) return best;
  return lower.length >= 2 ? contained : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(
        (previous[j] ?? 0) + 1,
        (current[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + cost,
      );
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
