import { stat } from "node:fs/promises";
import { type HistorySource, jobRows } from "../../history/index.js";
import { log } from "../../log.js";
import type { KeptEventRows, KeptRowsLookup, QuerySource } from "../../query/index.js";

/**
 * query_export's `events` rows of an export the history holds whole, read from the history's
 * Parquet (history/job-files.ts) instead of the CSV: the first question on a just-downloaded
 * large export then reads typed columns rather than parsing every field of the file. Only an
 * export whose every row is kept: one with rounds replaced by a newer export, or past the kept
 * days, is read from its file as before; so is every export when the history is off or cannot be
 * read, and one whose history files are gone. The query module may not import the history: the
 * lookup is handed to it.
 */
export interface HistoryRows {
  lookup: KeptRowsLookup;
  /** The history files the lookup handed out, to tell why a read failed. */
  readonly used: readonly string[];
}

export interface HistoryRowsOptions {
  /** True while this process adds the job's file to the history (the keeper's `adding`). */
  adding?: (jobId: string) => Promise<boolean>;
  /** Called when an export is read from the history (the call's progress). */
  onRead?: (source: QuerySource) => Promise<void> | void;
}

export function historyRows(
  open: () => Promise<HistorySource | undefined>,
  options: HistoryRowsOptions = {},
): HistoryRows {
  const used: string[] = [];
  const lookup = async (source: QuerySource): Promise<KeptEventRows | "coming" | undefined> => {
    if (source.jobId === null) return undefined;
    try {
      const history = await open();
      if (history === undefined) return undefined;
      const rows = await jobRows(history, source.jobId);
      if (rows === undefined) {
        // Just downloaded and being added: the file answers this question, and the history's
        // copy the next ones, so no Parquet copy of the file is begun beside it.
        return (await options.adding?.(source.jobId)) === true ? "coming" : undefined;
      }
      if (!rows.complete || !(await allPresent(rows.files))) return undefined;
      used.push(...rows.files);
      log.debug("query_export: an export's rows are read from the history", {
        job_id: source.jobId,
        files: rows.files.length,
      });
      await options.onRead?.(source);
      return { format: "kept", sql: rows.sql, paths: rows.files, jobId: source.jobId };
    } catch (error) {
      // The export's own file answers the question all the same.
      log.warn("query_export: the history could not be read; the export file is read instead", {
        job_id: source.jobId,
        error: error instanceof Error ? error.message : String(error),
      });
      return undefined;
    }
  };
  return { lookup, used };
}

/**
 * Runs `work` with the history's rows; when it fails after a file it was given has gone (a
 * commit of another process replaced it meanwhile), runs it again over the exports' own files.
 */
export async function withHistoryRows<T>(
  rows: HistoryRows,
  work: (lookup: KeptRowsLookup | undefined) => Promise<T>,
): Promise<T> {
  try {
    return await work(rows.lookup);
  } catch (error) {
    if (rows.used.length === 0 || (await allPresent(rows.used))) throw error;
    log.info("query_export: a history file was replaced during the read; reading the export files");
    return work(undefined);
  }
}

async function allPresent(paths: readonly string[]): Promise<boolean> {
  for (const path of paths) {
    const info = await stat(path).catch(() => undefined);
    if (info?.isFile() !== true) return false;
  }
  return true;
}
