import { join } from "node:path";
import { csvReadSql, sqlString, typedColumnsSql } from "../query/events-view.js";
import type { RoundRows } from "./catalogue.js";
import { HistoryError } from "./errors.js";
import { PARQUET_OPTIONS } from "./parquet.js";
import type { WorkEngine } from "./work-engine.js";

/**
 * The first step of adding a campaign CSV: one pass over the file, with the `events` view's
 * reader (fixed columns and types, no sniffing), into one Parquet file of this process's staging
 * folder, each row carrying its job ID; then, when its rounds fall in more than one month of
 * scheduled_at, one file per month made from it. A row the reader cannot take (a cut line, an
 * unterminated quote, a bad time or JSON value) stops it: a truncated or malformed file is never
 * added, in part or whole.
 *
 * The CSV goes into a single file rather than straight into month folders: DuckDB's partitioned
 * writer spends about as much CPU again as the read itself, while most exports hold one or two
 * months, and copying one month out of the Parquet file costs a fraction of reading the CSV.
 */
/**
 * DuckDB reads a CSV in buffers of 32 MB by default, several at once, outside what it can spill:
 * 8 MB (four times its longest line, 2 MB) keeps the writer within its memory limit.
 */
const READ_BUFFER_BYTES = 8 * 1024 * 1024;

export interface StagedCampaign {
  /** Per `YYYY-MM`: the staged files and the rounds they hold. */
  months: Map<string, { files: string[]; rounds: RoundRows[] }>;
  rows: number;
  /** Channels of the send-record rows (`control` excluded), sorted. */
  channels: string[];
}

export async function stageCampaignCsv(
  engine: WorkEngine,
  csvPath: string,
  jobId: string,
  staging: string,
): Promise<StagedCampaign> {
  const whole = join(staging, "events.parquet");
  try {
    await engine.run(
      `COPY (SELECT ${typedColumnsSql()}, ${sqlString(jobId)} AS job_id FROM ${csvReadSql([csvPath], { bufferBytes: READ_BUFFER_BYTES })}) TO ${sqlString(whole)} (${PARQUET_OPTIONS})`,
    );
  } catch (error) {
    if (error instanceof HistoryError || !isReadError(error)) throw error;
    throw malformed(csvPath, error);
  }
  const staged = `read_parquet(${sqlString(whole)}, hive_partitioning = false)`;
  // The channels ride along with the rounds: one read of the staged file for both.
  const roundRows = await engine.rows(
    `SELECT strftime(scheduled_at, '%Y-%m'), task_id, strftime(scheduled_at, '%Y-%m-%d %H:%M:%S'), "group", count(*), list(DISTINCT channel) FILTER (WHERE channel IS NOT NULL AND channel <> 'control') FROM ${staged} GROUP BY task_id, scheduled_at, "group" ORDER BY 1, 3, 2, 4`,
  );
  const months = new Map<string, { files: string[]; rounds: RoundRows[] }>();
  const channels = new Set<string>();
  let rows = 0;
  for (const [month, taskId, scheduledAt, group, count, roundChannels] of roundRows) {
    if (
      typeof month !== "string" ||
      typeof scheduledAt !== "string" ||
      !/^\d{4}-\d{2}$/.test(month)
    ) {
      throw new HistoryError(
        `${JSON.stringify(csvPath)} cannot be added to the history: ${Number(count)} rows have no scheduled_at, and every row of a campaign export names its round's scheduled time (spec 2.4). Check that the file is an unedited campaign_event_data export; download it again or create a new export (start_export with force: true).`,
        "malformed_file",
      );
    }
    let entry = months.get(month);
    if (entry === undefined) {
      entry = { files: [], rounds: [] };
      months.set(month, entry);
    }
    entry.rounds.push({
      task_id: taskId === null ? null : String(taskId),
      scheduled_at: scheduledAt,
      group: group === null ? null : String(group),
      rows: Number(count),
    });
    rows += Number(count);
    if (Array.isArray(roundChannels)) for (const c of roundChannels) channels.add(String(c));
  }
  if (months.size === 1) {
    for (const entry of months.values()) entry.files.push(whole);
  } else if (months.size > 1) {
    // One filtered copy per month: the rows come in time order, so each reads little more than
    // its own row groups (DuckDB's PARTITION_BY costs about three times as much CPU here).
    let n = 0;
    for (const [month, entry] of months) {
      const file = join(staging, `events-${n++}.parquet`);
      const from = `TIMESTAMP ${sqlString(`${month}-01`)}`;
      await engine.run(
        `COPY (SELECT * FROM ${staged} WHERE scheduled_at >= ${from} AND scheduled_at < ${from} + INTERVAL 1 MONTH) TO ${sqlString(file)} (${PARQUET_OPTIONS})`,
      );
      entry.files.push(file);
    }
  }
  return { months, rows, channels: [...channels].sort() };
}

/**
 * An error of the file's content, as DuckDB's CSV reader reports one; anything else (memory, the
 * disk, a cancel) is not the file's fault and is passed on as it is.
 */
function isReadError(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /CSV Error on Line|Error when converting column|unterminated quote|Invalid unicode/i.test(
    message,
  );
}

/**
 * DuckDB's reason, in words of our own: its message quotes the offending line (a user's data),
 * which never goes into a result or the log.
 */
export function malformed(path: string, error: unknown): HistoryError {
  const message = error instanceof Error ? error.message : String(error);
  const line = /CSV Error on Line: (\d+)/.exec(message)?.[1];
  let why = "it cannot be read as the campaign CSV of spec 2.4";
  const columns = /Expected Number of Columns: (\d+) Found: (\d+)/.exec(message);
  const converting = /Error when converting column "([^"]+)"[\s\S]*?to '([A-Z]+)'/.exec(message);
  if (columns !== null) why = `it has ${columns[2]} fields where ${columns[1]} are expected`;
  else if (/unterminated quote/i.test(message)) why = "a quoted field is never closed";
  else if (converting !== null) {
    why = `its ${converting[1]} field is not a valid ${converting[2] === "JSON" ? "JSON text" : "time (YYYY-MM-DD HH:mm:ss)"}`;
  } else if (/invalid unicode|utf-?8/i.test(message)) why = "it is not valid UTF-8 text";
  const where = line === undefined ? "" : `line ${line}: `;
  return new HistoryError(
    `${JSON.stringify(path)} cannot be added to the history: ${where}${why}. The file looks cut short or is not an unedited campaign export; nothing of it was added. Export it again: start_export with the same arguments and force: true (check_export would give back the same file).`,
    "malformed_file",
  );
}
