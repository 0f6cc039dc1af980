import type { DuckDBConnection } from "@duckdb/node-api";
import { AMOUNT_KEYS, CURRENCY_KEYS } from "../analysis/campaign/revenue.js";
import { ROLES } from "../analysis/event-roles.js";
import { sqlString } from "./events-view.js";
import { type SessionOptions, withDeadline, withSession } from "./run.js";
import { type JsonValue, toJsonValue } from "./values.js";

/**
 * What a model needs before writing SQL over these exports: the tables and their columns, the
 * rows of each event_role, the event types present with their role and counts, the JSON property
 * keys seen, the rounds and groups, and example queries built from this data (each one runs on
 * it).
 */
export interface ExportDescription {
  tables: { name: string; rows: number; columns: { name: string; type: string }[] }[];
  /** The conversion_event_type given (trimmed); null: summarize_export's default rule. */
  conversion_event_type: string | null;
  event_roles: { event_role: string; rows: number }[];
  event_types: { event_type: string; event_role: string; rows: number }[];
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
      const roleRows = new Map(
        (await rows(c, "SELECT event_role, count(*) FROM events GROUP BY 1")).map((r) => [
          String(r[0]),
          Number(r[1]),
        ]),
      );
      // In the funnel's order (sent, received, ...), not by count.
      const eventRoles = ROLES.filter((role) => roleRows.has(role)).map((role) => ({
        event_role: role,
        rows: roleRows.get(role) ?? 0,
      }));
      // The role depends on the type alone, so any row's role is the type's.
      const eventTypes = (
        await rows(
          c,
          `SELECT event_type, any_value(event_role), count(*) FROM events GROUP BY 1 ORDER BY 3 DESC, 1 LIMIT ${MAX_EVENT_TYPES}`,
        )
      ).map((r) => ({ event_type: String(r[0]), event_role: String(r[1]), rows: Number(r[2]) }));
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
        `SELECT task_id, scheduled_at, "group", count(*) FILTER (WHERE event_role = 'sent'), count(*) OVER () FROM events GROUP BY 1, 2, 3 ORDER BY 2, 1, 3 LIMIT ${MAX_ROUNDS}`,
      );
      const rounds = roundRows.map((r) => ({
        task_id: String(r[0]),
        scheduled_at: String(r[1]),
        group: r[2] === null ? null : String(r[2]),
        sent: Number(r[3]),
      }));
      return {
        tables,
        conversion_event_type: options.conversionType ?? null,
        event_roles: eventRoles,
        event_types: eventTypes,
        json_keys: jsonKeys,
        rounds,
        rounds_total: Number(roundRows[0]?.[4] ?? 0),
        examples: examples(tables, eventRoles, jsonKeys),
      };
    }),
  );
}

/** A user as the summary counts one: platform_user_id, else user_id. */
export const USER = "coalesce(platform_user_id, user_id)";

/** The key the summary would read amounts (or currencies) from: the most used, ties by its order. */
function summaryKey(keys: Map<string, number>, order: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestRows = 0;
  for (const key of order) {
    const rows = keys.get(key) ?? 0;
    if (rows > bestRows) {
      best = key;
      bestRows = rows;
    }
  }
  return best;
}

/**
 * Example queries, each the SQL of a figure summarize_export gives or builds on (its rules, by
 * event_role), offered only where this data has the rows it needs.
 */
function examples(
  tables: ExportDescription["tables"],
  roles: ExportDescription["event_roles"],
  jsonKeys: ExportDescription["json_keys"],
): string[] {
  const out: string[] = [];
  const has = (name: string) => (tables.find((t) => t.name === name)?.rows ?? 0) > 0;
  const hasRole = (role: string) => roles.some((r) => r.event_role === role && r.rows > 0);
  if (has("events")) {
    out.push(
      `SELECT event_role, count(*) AS rows, count(DISTINCT ${USER}) AS users FROM events GROUP BY 1 ORDER BY 2 DESC`,
    );
    out.push(
      `SELECT task_id, scheduled_at, "group", count(*) FILTER (WHERE event_role = 'sent') AS sent, count(*) FILTER (WHERE event_role = 'received') AS received, count(*) FILTER (WHERE event_role = 'failed') AS failed, count(*) FILTER (WHERE event_role = 'open') AS opens, count(DISTINCT ${USER}) FILTER (WHERE event_role = 'open') AS open_users, count(*) FILTER (WHERE event_role = 'conversion') AS conversions FROM events GROUP BY ALL ORDER BY scheduled_at, task_id, "group"`,
    );
    if (hasRole("failed")) {
      out.push(
        "SELECT date_trunc('hour', captured_at) AS hour, error_code, count(*) AS failures FROM events WHERE event_role = 'failed' GROUP BY ALL ORDER BY 1, 3 DESC",
      );
    }
    if (hasRole("open")) {
      out.push(
        `SELECT count(*) AS users FROM (SELECT ${USER} AS user_key, count(*) FILTER (WHERE event_role = 'open') AS opens, count(*) FILTER (WHERE event_role = 'conversion') AS conversions FROM events WHERE ${USER} IS NOT NULL GROUP BY 1) WHERE opens >= 2 AND conversions = 0`,
      );
    }
    if (hasRole("conversion")) {
      const keys = new Map(
        jsonKeys.filter((k) => k.column === "event_properties").map((k) => [k.key, k.rows]),
      );
      const amountKey = summaryKey(keys, AMOUNT_KEYS);
      const currencyKey = summaryKey(keys, CURRENCY_KEYS);
      if (amountKey !== undefined && currencyKey !== undefined) {
        const amount = `TRY_CAST(event_properties->>${sqlString(amountKey)} AS DOUBLE)`;
        out.push(
          `SELECT upper(trim(event_properties->>${sqlString(currencyKey)})) AS currency, sum(${amount}) AS amount, count(*) AS conversions FROM events WHERE event_role = 'conversion' AND ${amount} IS NOT NULL GROUP BY 1 ORDER BY 2 DESC`,
        );
      }
    }
    if (hasRole("received") && hasRole("open")) {
      // Per user and round, as the summary's timing: first receipt to first open (or conversion).
      out.push(
        `WITH firsts AS (SELECT task_id, scheduled_at, "group", ${USER} AS user_key, min(captured_at) FILTER (WHERE event_role = 'received') AS received_at, min(captured_at) FILTER (WHERE event_role = 'open') AS opened_at, min(captured_at) FILTER (WHERE event_role = 'conversion') AS converted_at FROM events WHERE ${USER} IS NOT NULL GROUP BY ALL) SELECT coalesce("group", '(none)') AS "group", count(*) FILTER (WHERE opened_at >= received_at) AS openers, quantile_disc(date_diff('second', received_at, opened_at), 0.5) FILTER (WHERE opened_at >= received_at) / 60 AS median_minutes_to_open, quantile_disc(date_diff('second', received_at, converted_at), 0.5) FILTER (WHERE converted_at >= received_at) / 60 AS median_minutes_to_conversion FROM firsts GROUP BY 1 ORDER BY 1`,
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
