import { eventRoleSql } from "../analysis/event-roles.js";
import { CAMPAIGN_CSV_COLUMNS } from "../api/schemas.js";

/**
 * The `events` view over the chosen campaign CSVs (contract, query_export): the file's 13 columns
 * under their own names, times as TIMESTAMP in the file's local time, JSON columns typed JSON
 * (so `event_properties->>'amount'` works), an empty field NULL, the job the file came from, and
 * each row's `event_role` by summarize_export's rules (analysis/event-roles.ts). The role is
 * computed by the view, never stored: a Parquet copy serves every conversion type.
 */

/** The view's columns, in order. */
export const EVENTS_COLUMNS = [...CAMPAIGN_CSV_COLUMNS, "job_id", "event_role"] as const;

type CampaignColumn = (typeof CAMPAIGN_CSV_COLUMNS)[number];

const TIMESTAMP_COLUMNS = new Set<CampaignColumn>(["scheduled_at", "captured_at"]);
const JSON_COLUMNS = new Set<CampaignColumn>([
  "event_properties",
  "custom_event_properties",
  "internal_event_properties",
]);

export function columnType(column: CampaignColumn): string {
  if (TIMESTAMP_COLUMNS.has(column)) return "TIMESTAMP";
  if (JSON_COLUMNS.has(column)) return "JSON";
  return "VARCHAR";
}

/**
 * What the view reads of one export: the CSV itself, its Parquet copy (same columns, same types),
 * or its rows kept whole elsewhere.
 */
export type EventsFile = ExportFile | KeptEventRows;

/** The export's CSV, or its Parquet copy. */
export interface ExportFile {
  /** The path DuckDB reads. */
  path: string;
  format: "csv" | "parquet";
  jobId: string | null;
}

/**
 * An export's rows kept whole by another module (the history's Parquet files): a SELECT giving
 * exactly the file's rows as its 13 columns typed as the view types them, then `job_id`, and
 * the only files it reads. The query module runs it as given, so only code builds it.
 */
export interface KeptEventRows {
  format: "kept";
  sql: string;
  paths: readonly string[];
  jobId: string;
}

/** The files DuckDB reads for one part of the view. */
export function eventsFilePaths(file: EventsFile): readonly string[] {
  return file.format === "kept" ? file.paths : [file.path];
}

export function sqlString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

export function sqlIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

const COLUMN_LIST = CAMPAIGN_CSV_COLUMNS.map(sqlIdentifier).join(", ");

/**
 * Fixed names and types, no sniffing: a sniffer guessing from a sample could type a column of
 * IDs as numbers. Quotes double as escapes, so multi-line quoted messages stay one field.
 */
export function csvReadSql(paths: string[], options: { bufferBytes?: number } = {}): string {
  const columns = CAMPAIGN_CSV_COLUMNS.map(
    (c) => `${sqlString(c)}: ${sqlString(columnType(c))}`,
  ).join(", ");
  // A smaller read buffer than DuckDB's 32 MB for a writer kept within a small memory limit.
  const buffer =
    options.bufferBytes === undefined ? "" : `, buffer_size = ${Math.floor(options.bufferBytes)}`;
  return `read_csv([${paths.map(sqlString).join(", ")}], header = true, auto_detect = false, delim = ',', quote = '"', escape = '"', columns = {${columns}}, timestampformat = '%Y-%m-%d %H:%M:%S', filename = true${buffer})`;
}

function parquetReadSql(paths: string[]): string {
  return `read_parquet([${paths.map(sqlString).join(", ")}], filename = true)`;
}

/** The 13 columns as the CSV reader types them: what a Parquet copy stores. */
export function typedColumnsSql(): string {
  return COLUMN_LIST;
}

/** The columns of a Parquet copy, typed again (JSON is stored as text). */
const PARQUET_COLUMNS = CAMPAIGN_CSV_COLUMNS.map(
  (c) => `CAST(${sqlIdentifier(c)} AS ${columnType(c)}) AS ${sqlIdentifier(c)}`,
).join(", ");

/** The job ID of each file, looked up by the file name DuckDB reports for each row. */
function jobIdSql(files: ExportFile[]): string {
  const known = files.filter((f) => f.jobId !== null);
  if (known.length === 0) return "CAST(NULL AS VARCHAR) AS job_id";
  const whens = known
    .map((f) => `WHEN ${sqlString(f.path)} THEN ${sqlString(f.jobId as string)}`)
    .join(" ");
  return `CAST(CASE filename ${whens} END AS VARCHAR) AS job_id`;
}

function emptyEventsSql(): string {
  const columns = CAMPAIGN_CSV_COLUMNS.map(
    (c) => `CAST(NULL AS ${columnType(c)}) AS ${sqlIdentifier(c)}`,
  );
  return `SELECT ${columns.join(", ")}, CAST(NULL AS VARCHAR) AS job_id WHERE false`;
}

/**
 * The view over `files`; `conversionType` (already trimmed, see conversionTypeOf) decides which
 * rows are conversions, as summarize_export's conversion_event_type does.
 */
export function eventsViewSql(files: EventsFile[], conversionType: string | undefined): string {
  const role = `${eventRoleSql("event_type", conversionType)} AS event_role`;
  return `CREATE VIEW events AS SELECT *, ${role} FROM (${rowsSql(files)})`;
}

function rowsSql(files: EventsFile[]): string {
  if (files.length === 0) return emptyEventsSql();
  const parts: string[] = [];
  const exportFiles = files.filter((f): f is ExportFile => f.format !== "kept");
  const csv = exportFiles.filter((f) => f.format === "csv").map((f) => f.path);
  const parquet = exportFiles.filter((f) => f.format === "parquet").map((f) => f.path);
  const jobId = jobIdSql(exportFiles);
  if (csv.length > 0) parts.push(`SELECT ${COLUMN_LIST}, ${jobId} FROM ${csvReadSql(csv)}`);
  if (parquet.length > 0) {
    parts.push(`SELECT ${PARQUET_COLUMNS}, ${jobId} FROM ${parquetReadSql(parquet)}`);
  }
  // Positional, as UNION ALL is: the kept rows' columns come in the same order and types.
  for (const kept of files) if (kept.format === "kept") parts.push(`SELECT * FROM (${kept.sql})`);
  return parts.join(" UNION ALL ");
}
