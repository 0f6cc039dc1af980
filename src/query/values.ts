import type { DuckDBValue } from "@duckdb/node-api";

/**
 * DuckDB values as JSON values, so a result goes out through MCP and `--json` unchanged:
 * - integers (BIGINT, HUGEINT, ...) as numbers while they are exact (|n| <= 2^53 - 1), else as
 *   decimal strings; DECIMAL as a number (a double);
 * - NaN and infinities as the strings "NaN", "Infinity", "-Infinity";
 * - DATE, TIME, TIMESTAMP, INTERVAL, UUID, BLOB and the rest as DuckDB writes them
 *   (`2026-11-01 10:00:00` for a TIMESTAMP, in the file's local time);
 * - LIST and ARRAY as arrays, STRUCT as objects, MAP as an array of {key, value}.
 * JSON columns are text: DuckDB hands them over as strings, and they stay strings.
 */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [k: string]: JsonValue };

export function toJsonValue(value: DuckDBValue): JsonValue {
  if (value === null || typeof value === "boolean" || typeof value === "string") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : String(value);
  if (typeof value === "bigint") {
    return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)
      ? Number(value)
      : value.toString();
  }
  if ("items" in value) return value.items.map(toJsonValue);
  if ("toDouble" in value && typeof value.toDouble === "function") return value.toDouble();
  if ("entries" in value) {
    const entries: unknown = value.entries;
    if (Array.isArray(entries)) {
      return (entries as { key: DuckDBValue; value: DuckDBValue }[]).map((e) => ({
        key: toJsonValue(e.key),
        value: toJsonValue(e.value),
      }));
    }
    const out: Record<string, JsonValue> = {};
    for (const [k, v] of Object.entries(entries as Record<string, DuckDBValue>)) {
      out[k] = toJsonValue(v);
    }
    return out;
  }
  return String(value);
}
