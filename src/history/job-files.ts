import { join } from "node:path";
import { sqlString } from "../query/events-view.js";
import { eventsPartitions } from "./catalogue.js";
import { fileListSql, typedEventColumnsSql } from "./parquet.js";
import type { HistorySource } from "./query.js";

/**
 * Where the history holds one downloaded export's rows, so that a question about that export can
 * read Parquet instead of its CSV: the events files whose partitions keep rounds of the job, and
 * the statement that gives exactly its rows with the `events` view's 13 typed columns and
 * `job_id`. `complete` is true only when every row of the file is kept: no round of it was
 * replaced by a newer export or passed the kept days (otherwise the CSV is the only whole copy).
 * The files are those the catalogue names at `generation`; a commit of another process may
 * replace them, and a reader that finds one gone asks again.
 */
export interface JobRows {
  job_id: string;
  files: string[];
  /** A SELECT of the job's rows (the 13 columns typed as in `events`, then job_id). */
  sql: string;
  /** Rows of the downloaded file, and of them the rows the history keeps. */
  rows: number;
  rows_kept: number;
  complete: boolean;
  generation: number;
}

/** The history's copy of a campaign export's rows, or undefined when it holds none of them. */
export async function jobRows(history: HistorySource, jobId: string): Promise<JobRows | undefined> {
  const catalogue = await history.store.read();
  const record = catalogue.exports.find((e) => e.job_id === jobId);
  if (record === undefined || record.kind !== "campaign_event_data") return undefined;
  const files: string[] = [];
  let kept = 0;
  for (const partition of eventsPartitions(catalogue)) {
    const mine = partition.rounds.filter((r) => r.job_id === jobId);
    if (mine.length === 0) continue;
    files.push(join(history.folder, partition.file));
    kept += mine.reduce((sum, r) => sum + r.rows, 0);
  }
  if (files.length === 0) return undefined;
  return {
    job_id: jobId,
    files,
    sql: `SELECT ${typedEventColumnsSql()}, job_id FROM read_parquet(${fileListSql(files)}, hive_partitioning = false) WHERE job_id = ${sqlString(jobId)}`,
    rows: record.rows,
    rows_kept: kept,
    complete: kept === record.rows,
    generation: catalogue.generation,
  };
}
