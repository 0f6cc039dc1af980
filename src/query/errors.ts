/**
 * A query that could not run, or was refused: the message says what happened and what to do
 * next. DuckDB's own message is kept (it names the column or the line) but never a file's rows.
 */
export class QueryError extends Error {
  override name = "QueryError";
  constructor(
    message: string,
    readonly code:
      | "bad_input"
      | "not_found"
      | "unsupported_file"
      | "outside_data_folder"
      | "not_campaign_export"
      | "refused_statement"
      | "sql_error"
      | "timeout"
      | "cancelled"
      | "engine_unavailable",
  ) {
    super(message);
  }
}
