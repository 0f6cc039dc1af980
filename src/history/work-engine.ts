import type { DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { loadDuckDb } from "../query/engine.js";
import { type JsonValue, toJsonValue } from "../query/values.js";
import { HistoryError } from "./errors.js";

/**
 * The DuckDB that writes the history: in memory, its own spill folder inside the staging folder,
 * no extension installed or loaded, within a small memory limit (DuckDB's own buffers; the process
 * adding an export of EXPORT_MAX_SENDS sends peaks near 300 MB, see bench/RESULTS.md), interrupted when
 * `signal` aborts.
 */
export interface WorkEngine {
  /** For appenders; statements go through run and rows, which map a cancel. */
  readonly connection: DuckDBConnection;
  run(sql: string): Promise<void>;
  rows(sql: string): Promise<JsonValue[][]>;
  close(): void;
}

export interface WorkLimits {
  memoryMb: number;
  threads: number;
}

export async function openWorkEngine(
  limits: WorkLimits,
  spillFolder: string,
  signal?: AbortSignal,
): Promise<WorkEngine> {
  const duck = await loadDuckDb();
  const instance: DuckDBInstance = await duck.DuckDBInstance.create(":memory:", {
    threads: String(limits.threads),
    memory_limit: `${limits.memoryMb}MB`,
    temp_directory: spillFolder,
    // Rows need no order in a file (every reader groups or filters); without one, the CSV's
    // parallel reader streams into the writer instead of holding chunks to keep them in order.
    preserve_insertion_order: "false",
    autoinstall_known_extensions: "false",
    autoload_known_extensions: "false",
  });
  let connection: DuckDBConnection;
  try {
    connection = await instance.connect();
  } catch (error) {
    instance.closeSync();
    throw error;
  }
  const onAbort = () => connection.interrupt();
  signal?.addEventListener("abort", onAbort, { once: true });
  const guard = async <T>(work: () => Promise<T>): Promise<T> => {
    if (signal?.aborted) throw cancelled();
    try {
      return await work();
    } catch (error) {
      if (signal?.aborted) throw cancelled();
      throw error;
    }
  };
  return {
    connection,
    run: (sql) =>
      guard(async () => {
        await connection.run(sql);
      }),
    rows: (sql) =>
      guard(async () => {
        const reader = await connection.runAndReadAll(sql);
        return reader.getRows().map((row) => row.map(toJsonValue));
      }),
    close() {
      signal?.removeEventListener("abort", onAbort);
      connection.closeSync();
      instance.closeSync();
    },
  };
}

function cancelled(): HistoryError {
  return new HistoryError("adding the export to the history was cancelled.", "cancelled");
}
