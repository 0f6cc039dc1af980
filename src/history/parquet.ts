import { CAMPAIGN_CSV_COLUMNS } from "../api/csv-columns.js";
import { columnType, sqlIdentifier, sqlString } from "../query/events-view.js";

/**
 * How the history writes Parquet: zstd at level 1 (a campaign export's repetitive IDs, times and
 * JSON shrink to about an eighth of the CSV; DuckDB's default level 3 makes files no smaller for
 * more CPU), row groups of 30,720 rows: a quarter of DuckDB's default, which keeps the process
 * adding an export of EXPORT_MAX_SENDS sends under 300 MB (373 MB at the default) with files of
 * the same size (bench/RESULTS.md).
 */
export const PARQUET_OPTIONS =
  "FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE 30720";

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
