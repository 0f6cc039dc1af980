import { QueryError } from "./errors.js";

/**
 * A DuckDB error as a QueryError: a read the session's settings blocked is a refusal, the rest
 * are SQL errors.
 */
export function sqlError(error: unknown): QueryError {
  const message = error instanceof Error ? error.message : String(error);
  const blocked = /^Permission Error/.test(message) || /disabled by configuration/.test(message);
  return new QueryError(sqlErrorText(error), blocked ? "refused_statement" : "sql_error");
}

/**
 * DuckDB's error message with a hint for the model: DuckDB names the column, the function or
 * the position, and we add what is true of these tables.
 */
export function sqlErrorText(error: unknown): string {
  const message = (error instanceof Error ? error.message : String(error)).trim();
  return `DuckDB could not run the query: ${message}\nHint: ${hintFor(message)}`;
}

function hintFor(message: string): string {
  if (/^Permission Error/.test(message) || /disabled by configuration/.test(message)) {
    return "only the chosen exports can be read, through the tables events, scenario_nodes and scenario_days; no other file, folder or URL.";
  }
  if (/^Catalog Error/.test(message)) {
    return "the tables are events (campaign CSVs), scenario_nodes and scenario_days (scenario XLSX); call query_export without sql to see their columns.";
  }
  if (/^Binder Error/.test(message) && /column/i.test(message)) {
    return 'events has task_id, scheduled_at, "group" (a reserved word: quote it), event_type, user_id, platform_user_id, captured_at, channel, error_code, error_message, event_properties, custom_event_properties, internal_event_properties, job_id; call query_export without sql to see every table.';
  }
  if (/^Parser Error/.test(message)) {
    return "the SQL is DuckDB's dialect; quote the column \"group\"; read JSON fields with event_properties->>'amount'.";
  }
  if (/^Conversion Error|^Invalid Input Error/.test(message)) {
    return "->> binds more loosely than AND, = and IS: wrap it in parentheses, (event_properties->>'amount'); JSON fields are text, so cast them: TRY_CAST(event_properties->>'amount' AS DOUBLE).";
  }
  if (/^Out of Memory Error/.test(message)) {
    return "the query needs more memory than CRM_QUERY_MEMORY_MB allows; aggregate (GROUP BY) or filter before sorting or joining large sets.";
  }
  return "fix the SQL and call again; call query_export without sql to see the tables and example queries.";
}
