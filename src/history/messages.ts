import { eventRoleSql } from "../analysis/event-roles.js";
import { USER } from "../query/describe.js";
import { sqlIdentifier } from "../query/events-view.js";

/**
 * The history's messages: one row per user and round, what the questions across campaigns and
 * time group by (fatigue, time since the previous message, overlap, weekly rates). Grouping the
 * events into messages is the costly step of those questions over a large history, so each
 * events file gets its messages file when it is written (campaign-write.ts), under
 * `messages/campaign_id=/round_month=`, holding exactly the rounds its events file holds: the
 * newest-export rule and the kept days apply to both at once.
 *
 * A user is who summarize_export counts as one (`platform_user_id`, else `user_id`); rows with
 * neither are left out. `user_key` is DuckDB's 64-bit `hash` of that text: a fixed-width key that
 * groups and sorts several times faster than the text, and costs a seventh of MD5 to make (two of
 * ten million users share one with odds of about 3 in a million). DuckDB does not promise the
 * same hash across versions, so each file's record keeps the hash of a fixed text as it was
 * written (`USER_KEY_PROBE`): a session whose DuckDB hashes it otherwise groups that file's
 * events itself, as it does for a partition without a messages file (views.ts). A question joins
 * back to `history` on `hash(coalesce(platform_user_id, user_id)) = user_key`. The flags follow
 * summarize_export's roles with no conversion event type given; a question asked with one gets
 * the same table grouped from `history` instead.
 */

/** The text whose hash tells which hash function wrote a file's user keys. */
const USER_KEY_PROBE = "crm-insights-mcp user key";

/** The statement giving the probe's hash as this DuckDB computes it (one VARCHAR cell). */
export const USER_KEY_PROBE_SQL = `SELECT CAST(hash('${USER_KEY_PROBE}') AS VARCHAR)`;

/** The columns of a messages file, in order, with their types. */
export const MESSAGE_FILE_COLUMNS: readonly (readonly [string, string])[] = [
  ["task_id", "VARCHAR"],
  ["scheduled_at", "TIMESTAMP"],
  ["group", "VARCHAR"],
  ["job_id", "VARCHAR"],
  ["user_key", "UBIGINT"],
  ["channel", "VARCHAR"],
  ["sent", "BOOLEAN"],
  ["received_at", "TIMESTAMP"],
  ["failed", "BOOLEAN"],
  ["control", "BOOLEAN"],
  ["opened", "BOOLEAN"],
  ["clicked", "BOOLEAN"],
  ["converted", "BOOLEAN"],
];

/**
 * The messages of `source` (a relation with the events columns and `job_id`, plus any of
 * `keys`), grouped by round, export, user and `keys`. `role` is the event role of a row (a
 * column name or an expression); undefined: summarize_export's default rules on event_type.
 */
export function messagesSql(
  source: string,
  options: { role?: string; keys?: readonly string[] } = {},
): string {
  const role = options.role ?? eventRoleSql("event_type", undefined);
  const keys = (options.keys ?? []).map(sqlIdentifier);
  const group = [...keys, "task_id", "scheduled_at", `"group"`, "job_id", "user_key"].join(", ");
  const flag = (r: string) => `bool_or(message_role = '${r}')`;
  return `SELECT ${[...keys, "task_id", "scheduled_at", `"group"`, "job_id"].join(", ")}, user_key, any_value(channel) FILTER (WHERE message_role IN ('sent', 'received', 'failed')) AS channel, ${flag("sent")} AS sent, min(captured_at) FILTER (WHERE message_role = 'received') AS received_at, ${flag("failed")} AS failed, ${flag("control")} AS control, ${flag("open")} AS opened, ${flag("click")} AS clicked, ${flag("conversion")} AS converted FROM (SELECT *, hash(${USER}) AS user_key, ${role} AS message_role FROM ${source} WHERE ${USER} IS NOT NULL) GROUP BY ${group}`;
}
