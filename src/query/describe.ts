import type { DuckDBConnection } from "@duckdb/node-api";
import { sqlString } from "./events-view.js";
import { type SessionOptions, withDeadline, withSession } from "./run.js";
import { type JsonValue, toJsonValue } from "./values.js";

/**
 * What a model needs before writing SQL over these exports: the tables and their columns, the
 * event types present with their counts, the JSON property keys seen, the rounds and groups, and
 * example queries built from this data (each one runs on it).
 */
export interface ExportDescription {
  tables: { name: string; rows: number; columns: { name: string; type: string }[] }[];
  event_types: { event_type: string; rows: number }[];
  json_keys: { column: string; key: string; rows: number }[];
  rounds: { task_id: string; scheduled_at: string; group: string | null; sent: number }[];
  rounds_total: number;
  examples: string[];
}

const MAX_EVENT_TYPES = 40;
const MAX_JSON_KEYS = 40;
const MAX_ROUNDS = 30;

async function rows(connection: DuckDBConnection, sql: string): Promise<JsonValue[][]> {
  const reader = await connection.runAndReadAll(sql);
  return reader.getRows().map((row) => row.map(toJsonValue));
}

const JSON_COLUMNS = ["event_properties", "custom_event_properties", "internal_event_properties"];

export function describeExports(options: SessionOptions): Promise<ExportDescription> {
  return withSession(options, (_duck, session) =>
    withDeadline(session, options, async () => {
      const c = session.connection;
      const tables: ExportDescription["tables"] = [];
      for (const name of ["events", "scenario_nodes", "scenario_days"]) {
        const columns = (await rows(c, `DESCRIBE ${name}`)).map((r) => ({
          name: String(r[0]),
          type: String(r[1]),
        }));
        const count = Number((await rows(c, `SELECT count(*) FROM ${name}`))[0]?.[0] ?? 0);
        tables.push({ name, rows: count, columns });
      }
      const eventTypes = (
        await rows(
          c,
          `SELECT event_type, count(*) FROM events GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT ${MAX_EVENT_TYPES}`,
        )
      ).map((r) => ({ event_type: String(r[0]), rows: Number(r[1]) }));
      const keyQueries = JSON_COLUMNS.map(
        (col) =>
          `SELECT '${col}' AS col, unnest(json_keys(${col})) AS key FROM events WHERE json_type(${col}) = 'OBJECT'`,
      );
      const jsonKeys = (
        await rows(
          c,
          `SELECT col, key, count(*) FROM (${keyQueries.join(" UNION ALL ")}) GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2 LIMIT ${MAX_JSON_KEYS}`,
        )
      ).map((r) => ({ column: String(r[0]), key: String(r[1]), rows: Number(r[2]) }));
      const roundRows = await rows(
        c,
        `SELECT task_id, scheduled_at, "group", count(*) FILTER (WHERE event_type = 'message_sent'), count(*) OVER () FROM events GROUP BY 1, 2, 3 ORDER BY 2, 1, 3 LIMIT ${MAX_ROUNDS}`,
      );
      const rounds = roundRows.map((r) => ({
        task_id: String(r[0]),
        scheduled_at: String(r[1]),
        group: r[2] === null ? null : String(r[2]),
        sent: Number(r[3]),
      }));
      return {
        tables,
        event_types: eventTypes,
        json_keys: jsonKeys,
        rounds,
        rounds_total: Number(roundRows[0]?.[4] ?? 0),
        examples: examples(tables, eventTypes, jsonKeys),
      };
    }),
  );
}

const NOT_CONVERSION =
  /^(message_sent|message_received|message_failed|control_assigned)$|_(opened|clicked)$/;
const USER = "coalesce(platform_user_id, user_id)";

function examples(
  tables: ExportDescription["tables"],
  eventTypes: ExportDescription["event_types"],
  jsonKeys: ExportDescription["json_keys"],
): string[] {
  const out: string[] = [];
  const has = (name: string) => (tables.find((t) => t.name === name)?.rows ?? 0) > 0;
  if (has("events")) {
    out.push(
      `SELECT event_type, count(*) AS rows, count(DISTINCT ${USER}) AS users FROM events GROUP BY 1 ORDER BY 2 DESC`,
    );
    if (eventTypes.some((e) => e.event_type === "message_failed")) {
      out.push(
        "SELECT date_trunc('hour', captured_at) AS hour, error_code, count(*) AS failures FROM events WHERE event_type = 'message_failed' GROUP BY ALL ORDER BY 1, 3 DESC",
      );
    }
    const conversion = eventTypes.find((e) => !NOT_CONVERSION.test(e.event_type))?.event_type;
    if (conversion !== undefined) {
      const conv = sqlString(conversion);
      out.push(
        `SELECT count(*) AS users FROM (SELECT ${USER} AS u, count(*) FILTER (WHERE event_type LIKE '%_opened') AS opens, count(*) FILTER (WHERE event_type = ${conv}) AS conversions FROM events GROUP BY 1) WHERE opens >= 2 AND conversions = 0`,
      );
      const keys = new Set(
        jsonKeys.filter((k) => k.column === "event_properties").map((k) => k.key),
      );
      const amount = ["amount", "revenue", "price", "value"].find((k) => keys.has(k));
      if (amount !== undefined && keys.has("currency")) {
        out.push(
          `SELECT (event_properties->>'currency') AS currency, sum(TRY_CAST(event_properties->>'${amount}' AS DOUBLE)) AS total, count(*) AS conversions FROM events WHERE event_type = ${conv} GROUP BY 1`,
        );
      }
      out.push(
        `SELECT coalesce("group", '(none)') AS "group", median(date_diff('second', r.captured_at, c.captured_at)) / 60 AS median_minutes FROM events r JOIN events c USING (task_id, scheduled_at, "group", platform_user_id) WHERE r.event_type = 'message_received' AND c.event_type = ${conv} AND c.captured_at >= r.captured_at GROUP BY 1`,
      );
    }
  }
  if (has("scenario_nodes")) {
    out.push(
      "SELECT number, channel, branch, node_id, sends, opens, conversions, revenue FROM scenario_nodes ORDER BY job_id, number",
    );
    out.push(
      "SELECT date, sum(sends) AS sends, sum(conversions) AS conversions FROM scenario_days GROUP BY 1 ORDER BY 1",
    );
  }
  return out;
}
