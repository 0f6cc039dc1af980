import { tmpdir } from "node:os";
import { conversionTypeOf } from "../analysis/event-roles.js";
import type { QueryLimits } from "../config.js";
import { QueryError } from "./errors.js";
import { type CacheOptions, eventsFiles, type KeptRowsLookup } from "./parquet-cache.js";
import { type QueryResult, runQuery } from "./run.js";
import type { ExtraTables } from "./session.js";
import { MAX_QUERY_FILES, type QuerySource, resolveSource, uniqueSources } from "./sources.js";

export { QueryError } from "./errors.js";
export type { KeptEventRows } from "./events-view.js";
export type { KeptRowsLookup } from "./parquet-cache.js";
export type { QueryColumn, QueryResult } from "./run.js";
export type { QuerySource } from "./sources.js";

/** Longest cell of the structured rows returned whole; the text table cuts far shorter. */
export const MAX_CELL_CHARS = 2000;

export interface QueryFilesOptions {
  sql: string;
  /**
   * The conversion event type of the `event_role` column, as summarize_export's input (trimmed;
   * blank or absent: every type that is none of the others is a conversion).
   */
  conversionEventType?: string;
  files: { path: string; jobId: string | null }[];
  limits: QueryLimits;
  maxRows: number;
  /** Most characters of the returned rows as JSON; default no cap beyond max rows. */
  maxChars?: number;
  /** Where the per-query spill folder is made; default the system's temporary folder. */
  spillParent?: string;
  /** Checks each resolved file before anything is read (the tool keeps to its data folder). */
  checkSource?: (source: QuerySource) => Promise<void>;
  /** Read the data folder's exports through their Parquet copies (made on first use). */
  cache?: Omit<CacheOptions, "limits" | "signal">;
  /**
   * Where an export named by its job keeps its rows whole besides its file (the history's):
   * read there instead of the file or its Parquet copy.
   */
  keptRows?: KeptRowsLookup;
  /** Tables of another module in the same session (the history's); `files` may then be empty. */
  extra?: ExtraTables;
  signal?: AbortSignal;
}

/** Resolves the files, then runs the statement over them and the extra tables (see run.ts). */
export async function queryFiles(options: QueryFilesOptions): Promise<QueryResult> {
  const sources =
    options.files.length === 0 && options.extra !== undefined ? [] : await resolveSources(options);
  return runQuery({
    sql: options.sql,
    events: await eventsFiles(sources, cacheOptions(options), options.keptRows),
    conversionType: conversionTypeOf(options.conversionEventType),
    scenarios: sources.filter((s) => s.kind === "scenario_xlsx"),
    extra: options.extra,
    limits: options.limits,
    spillParent: options.spillParent ?? tmpdir(),
    maxRows: options.maxRows,
    maxChars: options.maxChars ?? Number.POSITIVE_INFINITY,
    maxCellChars: MAX_CELL_CHARS,
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

export async function resolveSources(options: QueryFilesOptions): Promise<QuerySource[]> {
  if (options.files.length === 0) {
    throw new QueryError("no export chosen: give job_ids or files.", "bad_input");
  }
  if (options.files.length > MAX_QUERY_FILES) {
    throw new QueryError(
      `${options.files.length} files given; one query reads at most ${MAX_QUERY_FILES}.`,
      "bad_input",
    );
  }
  const sources: QuerySource[] = [];
  for (const file of options.files) {
    const source = await resolveSource(file.path, file.jobId);
    await options.checkSource?.(source);
    sources.push(source);
  }
  return uniqueSources(sources);
}

/** The cache settings of a query, with its limits and signal. */
export function cacheOptions(
  options: Pick<QueryFilesOptions, "cache" | "limits" | "signal">,
): CacheOptions | undefined {
  if (options.cache === undefined) return undefined;
  return {
    ...options.cache,
    limits: options.limits,
    ...(options.signal ? { signal: options.signal } : {}),
  };
}
