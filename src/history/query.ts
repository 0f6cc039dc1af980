import { tmpdir } from "node:os";
import { conversionTypeOf } from "../analysis/event-roles.js";
import type { QueryLimits } from "../config.js";
import { QueryError } from "../query/errors.js";
import { MAX_CELL_CHARS } from "../query/index.js";
import { type QueryResult, runQuery, type SessionOptions } from "../query/run.js";
import type { ExtraTables } from "../query/session.js";
import type { HistoryCatalogue } from "./catalogue.js";
import type { CatalogueStore } from "./store.js";
import { historyTables } from "./views.js";

/**
 * Questions over the history: one read-only statement in a fresh locked-down session (the
 * query module's: the same refusals, limits and result caps as query_export) whose tables are
 * the history's (views.ts), over the files the catalogue names at the start.
 */
export interface HistoryQueryOptions {
  sql: string;
  maxRows: number;
  /** Most characters of the returned rows as JSON; default no cap beyond max rows. */
  maxChars?: number;
  limits: QueryLimits;
  /** The conversion event type of `event_role`, as summarize_export's input. */
  conversionEventType?: string | undefined;
  /** Where the per-query spill folder is made; default the system's temporary folder. */
  spillParent?: string;
  signal?: AbortSignal;
}

/** What the history's queries read from it. */
export interface HistorySource {
  readonly folder: string;
  readonly store: CatalogueStore;
}

export function queryHistory(
  history: HistorySource,
  options: HistoryQueryOptions,
): Promise<QueryResult> {
  return withHistoryTables(history, options.conversionEventType, (extra) =>
    runQuery({
      ...historySessionOptions(extra, options),
      sql: options.sql,
      maxRows: options.maxRows,
      maxChars: options.maxChars ?? Number.POSITIVE_INFINITY,
      maxCellChars: MAX_CELL_CHARS,
    }),
  );
}

/** The session options of a question over the history (for describe and for callers' own use). */
export function historySessionOptions(
  extra: ExtraTables,
  options: Pick<HistoryQueryOptions, "conversionEventType" | "limits" | "spillParent" | "signal">,
): SessionOptions {
  return {
    events: [],
    conversionType: conversionTypeOf(options.conversionEventType),
    scenarios: [],
    extra,
    limits: options.limits,
    spillParent: options.spillParent ?? tmpdir(),
    ...(options.signal ? { signal: options.signal } : {}),
  };
}

/** Tries a read again this many times when a commit replaced a file it was reading. */
const RETRIES = 3;

/**
 * Runs `work` over the history's tables as the catalogue names them now. A commit of another
 * process may replace a file between the catalogue's read and DuckDB's: the read then fails on
 * a missing file, and runs again over the new catalogue (a read-only statement is safe to repeat).
 */
export async function withHistoryTables<T>(
  history: HistorySource,
  conversionEventType: string | undefined,
  work: (extra: ExtraTables, catalogue: HistoryCatalogue) => Promise<T>,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const catalogue = await history.store.read();
    const extra = historyTables(history.folder, catalogue, conversionTypeOf(conversionEventType));
    try {
      return await work(extra, catalogue);
    } catch (error) {
      const missing =
        error instanceof Error &&
        /No such file|No files found|Cannot open file/i.test(error.message);
      if (!missing) throw error;
      const now = await history.store.read();
      if (now.generation === catalogue.generation || attempt >= RETRIES) {
        throw new QueryError(
          `a file of the history is missing (${history.folder}): it was removed outside crm-insights-mcp, or another machine's data folder is in use with the same database. Check CRM_DATA_DIR; exports added again restore it.`,
          "not_found",
        );
      }
    }
  }
}
