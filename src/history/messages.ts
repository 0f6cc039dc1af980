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
 * neither are left out. `user_key` is the first 64 bits of the MD5 of that text: a fixed-width
 * key that groups and sorts several times faster than the text, the same in every file and every
 * DuckDB version (two of ten million users share one with odds of about 3 in a million). The
 * flags follow summarize_export's roles with no conversion event type given; a question asked
 * with one gets the same table computed from `history` instead (views.ts).
 */

/** The columns of a messages file, in order, with their types. */
export const MESSAGE_FILE_COLUMNS: readonly (readonly [string, string])[] = [
  ["task_id", "VARCHAR"],
  ["scheduled_at", "TIMESTAMP"],
  ["group", "VARCHAR"],
  ["job_id", "VARCHAR"],
  ["user_key", "UBIGINT"],
  ["user", "VARCHAR"],
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
  const group = [...keys, `task_id`, `scheduled_at`, `"group"`, `job_id`, `"user"`].join(", ");
  const flag = (r: string) => `bool_or(message_role = '${r}')`;
  return `SELECT ${[...keys, "task_id", "scheduled_at", `"group"`, "job_id"].join(", ")}, md5_number_upper("user") AS user_key, "user", any_value(channel) FILTER (WHERE message_role IN ('sent', 'received', 'failed')) AS channel, ${flag("sent")} AS sent, min(captured_at) FILTER (WHERE message_role = 'received') AS received_at, ${flag("failed")} AS failed, ${flag("control")} AS control, ${flag("open")} AS opened, ${flag("click")} AS clicked, ${flag("conversion")} AS converted FROM (SELECT *, ${USER} AS "user", ${role} AS message_role FROM ${source}) WHERE "user" IS NOT NULL GROUP BY ${group}`;
}
