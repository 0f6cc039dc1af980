import { CAMPAIGN_CSV_COLUMNS } from "../api/csv-columns.js";
import { columnType, sqlIdentifier, sqlString } from "../query/events-view.js";

/**
 * How the history writes Parquet: zstd (a campaign export's repetitive IDs, times and JSON
 * shrink to a small part of the CSV), row groups of DuckDB's default size (each readable alone,
 * by any engine, in parallel).
 */
export const PARQUET_OPTIONS = "FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880";

/** The columns of an events file: the CSV's 13, typed as the `events` view types them, then job_id. */
export const EVENTS_FILE_COLUMNS = [...CAMPAIGN_CSV_COLUMNS, "job_id"] as const;

/** The 13 columns read back from Parquet with their view types (JSON is stored as text). */
export function typedEventColumnsSql(): string {
  return CAMPAIGN_CSV_COLUMNS.map(
    (c) => `CAST(${sqlIdentifier(c)} AS ${columnType(c)}) AS ${sqlIdentifier(c)}`,
  ).join(", ");
}

/** A list of files as read_parquet's first argument. */
export function fileListSql(paths: readonly string[]): string {
  return `[${paths.map(sqlString).join(", ")}]`;
}
