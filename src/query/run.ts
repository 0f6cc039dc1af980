import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import type { DuckDBPreparedStatement } from "@duckdb/node-api";
import type { QueryLimits } from "../config.js";
import { type DuckDb, loadDuckDb } from "./engine.js";
import { QueryError } from "./errors.js";
import type { EventsFile } from "./events-view.js";
import { type ExtraTables, openSession, type QuerySession } from "./session.js";
import type { QuerySource } from "./sources.js";
import { sqlError } from "./sql-hints.js";
import { prepareReadOnly } from "./statement-check.js";
import { type JsonValue, toJsonValue } from "./values.js";

export interface QueryColumn {
  name: string;
  /** DuckDB's type name: VARCHAR, BIGINT, TIMESTAMP, DECIMAL(18,3), JSON, ... */
  type: string;
}

/** The contract's result, plus what was cut. */
export interface QueryResult {
  columns: QueryColumn[];
  rows: JsonValue[][];
  /** Rows of the whole result, also those not returned. */
  row_count: number;
  truncated: boolean;
  /** Why rows were left out: the row cap, or the character cap of the returned rows. */
  truncated_by?: "max_rows" | "characters";
  /** Cells longer than the cell cap, returned cut (their text ends with "… (N chars)"). */
  cells_cut: number;
}

export interface QueryOptions {
  sql: string;
  /** What `events` reads; a CSV may be read through its Parquet copy. */
  events: EventsFile[];
  /** The conversion event type of `event_role` (trimmed); undefined: the default rule. */
  conversionType: string | undefined;
  scenarios: QuerySource[];
  /** Tables of another module in the same session (the history's). */
  extra?: ExtraTables | undefined;
  limits: QueryLimits;
  /** Parent of the per-query spill folder (made and removed here). */
  spillParent: string;
  maxRows: number;
  /** Most characters of the returned rows, as JSON. */
  maxChars: number;
  /** Longest cell returned whole. */
  maxCellChars: number;
  signal?: AbortSignal;
}

/** What a session needs, without the statement: the files, limits and where to spill. */
export type SessionOptions = Pick<
  QueryOptions,
  "events" | "conversionType" | "scenarios" | "extra" | "limits" | "spillParent" | "signal"
>;

/** Opens a fresh locked-down session over the files, runs `work` in it, and closes it. */
export async function withSession<T>(
  options: SessionOptions,
  work: (duck: DuckDb, session: QuerySession) => Promise<T>,
): Promise<T> {
  const duck = await loadDuckDb();
  if (options.signal?.aborted) throw cancelled();
  const spillFolder = await mkdtemp(join(options.spillParent, "query-spill-"));
  let session: QuerySession | undefined;
  try {
    session = await openSession(duck, {
      events: options.events,
      conversionType: options.conversionType,
      scenarios: options.scenarios,
      extra: options.extra,
      limits: options.limits,
      spillFolder,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    return await work(duck, session);
  } finally {
    session?.close();
    await rm(spillFolder, { recursive: true, force: true });
  }
}

/** Runs one read-only statement in a fresh locked-down session, within the time limit. */
export function runQuery(options: QueryOptions): Promise<QueryResult> {
  return withSession(options, async (duck, session) => {
    const prepared = await prepareReadOnly(duck, session, options.sql);
    return withDeadline(session, options, () => readCapped(prepared, options), options.sql);
  });
}

/**
 * Interrupts the running statement when the time limit passes or the caller cancels. `sql`, the
 * statement run, lets an error's hint speak of what it wrote.
 */
export async function withDeadline<T>(
  session: QuerySession,
  options: Pick<QueryOptions, "limits" | "signal">,
  work: () => Promise<T>,
  sql = "",
): Promise<T> {
  let reason: "timeout" | "cancelled" | undefined;
  const stop = (why: "timeout" | "cancelled") => {
    reason ??= why;
    session.connection.interrupt();
  };
  const timer = setTimeout(() => stop("timeout"), options.limits.timeoutSeconds * 1000);
  const onAbort = () => stop("cancelled");
  options.signal?.addEventListener("abort", onAbort, { once: true });
  // A cancel that came while the session was opening fired before the listener was there.
  if (options.signal?.aborted === true) stop("cancelled");
  const stopped = () =>
    reason === "timeout"
      ? new QueryError(
          `the query ran past the ${options.limits.timeoutSeconds}-second limit (CRM_QUERY_TIMEOUT_SECONDS) and was stopped. Narrow it: filter by event_type or time, aggregate before sorting, or avoid joins that multiply rows.`,
          "timeout",
        )
      : cancelled();
  try {
    const result = await work();
    // An interrupted stream may end as if it were complete: its counts would be wrong.
    if (reason !== undefined) throw stopped();
    return result;
  } catch (error) {
    if (reason !== undefined) throw stopped();
    if (error instanceof QueryError) throw error;
    throw sqlError(error, { sql, tables: session.tables });
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  }
}

function cancelled(): QueryError {
  return new QueryError("the query was cancelled.", "cancelled");
}

/**
 * Streams the result: rows are converted until a cap is reached, after which chunks are only
 * counted, so a million-row result costs one chunk of memory at a time and still reports its
 * full row_count.
 */
async function readCapped(
  prepared: DuckDBPreparedStatement,
  options: QueryOptions,
): Promise<QueryResult> {
  const result = await prepared.stream();
  const columns: QueryColumn[] = result.columnNames().map((name, i) => {
    const type = result.columnType(i);
    // JSON is an alias of VARCHAR: named as such, so a model knows ->> works on it.
    return { name, type: type.alias ?? type.toString() };
  });
  const rows: JsonValue[][] = [];
  let rowCount = 0;
  let chars = 2;
  let truncatedBy: QueryResult["truncated_by"];
  let cellsCut = 0;
  for (;;) {
    const chunk = await result.fetchChunk();
    if (chunk === null || chunk.rowCount === 0) break;
    if (truncatedBy === undefined) {
      for (const raw of chunk.getRows()) {
        if (rows.length >= options.maxRows) {
          truncatedBy = "max_rows";
          break;
        }
        const row = raw.map((value) => {
          const json = toJsonValue(value);
          if (typeof json !== "string" || json.length <= options.maxCellChars) return json;
          cellsCut++;
          return `${json.slice(0, options.maxCellChars)}… (${json.length} chars)`;
        });
        const size = JSON.stringify(row).length + 1;
        if (chars + size > options.maxChars) {
          truncatedBy = "characters";
          break;
        }
        chars += size;
        rows.push(row);
      }
    }
    rowCount += chunk.rowCount;
  }
  return {
    columns,
    rows,
    row_count: rowCount,
    truncated: truncatedBy !== undefined,
    ...(truncatedBy ? { truncated_by: truncatedBy } : {}),
    cells_cut: cellsCut,
  };
}
