import type { DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import type { QueryLimits } from "../config.js";
import type { DuckDb } from "./engine.js";
import {
  EVENTS_COLUMNS,
  type EventsFile,
  eventsFilePaths,
  eventsViewSql,
  sqlString,
} from "./events-view.js";
import { loadScenarioTables } from "./scenario-tables.js";
import type { QuerySource } from "./sources.js";
import type { TableColumns } from "./sql-hints.js";

/**
 * One locked-down DuckDB database per query, in memory: the tables over the chosen exports are
 * made first, then the session is closed to everything else before the user's SQL is seen:
 * - `allowed_paths` = exactly the files the tables read (another file of the same folder fails);
 * - `enable_external_access = false`: no other file, URL, ATTACH, extension install or load;
 * - extensions never installed or loaded automatically;
 * - memory limit, threads and a spill folder of its own from the configuration;
 * - `lock_configuration = true` last, so the SQL cannot SET any of this back.
 */
export interface QuerySession {
  readonly connection: DuckDBConnection;
  /** The tables' columns, for the hints of an error (sql-hints.ts). */
  readonly tables: readonly TableColumns[];
  close(): void;
}

/**
 * Tables made by another module (the history's), in the same session and under the same lock:
 * `create` runs before the lockdown, and `paths` are the only other files DuckDB may read.
 */
export interface ExtraTables {
  paths: readonly string[];
  create(connection: DuckDBConnection): Promise<TableColumns[]>;
}

export interface SessionPlan {
  /** What the `events` view reads (the CSVs or their Parquet copies). */
  events: EventsFile[];
  /** The conversion event type (trimmed); undefined: summarize_export's default rule. */
  conversionType: string | undefined;
  /** Scenario workbooks, loaded into scenario_nodes and scenario_days. */
  scenarios: QuerySource[];
  extra?: ExtraTables | undefined;
  limits: QueryLimits;
  /** An empty folder of this query's own, where DuckDB may spill. */
  spillFolder: string;
  signal?: AbortSignal;
}

export async function openSession(duck: DuckDb, plan: SessionPlan): Promise<QuerySession> {
  const instance: DuckDBInstance = await duck.DuckDBInstance.create(":memory:", {
    threads: String(plan.limits.threads),
    memory_limit: `${plan.limits.memoryMb}MB`,
    temp_directory: plan.spillFolder,
    autoinstall_known_extensions: "false",
    autoload_known_extensions: "false",
  });
  let connection: DuckDBConnection | undefined;
  let tables: TableColumns[];
  try {
    connection = await instance.connect();
    await connection.run(eventsViewSql(plan.events, plan.conversionType));
    const scenarioTables = await loadScenarioTables(duck, connection, plan.scenarios, plan.signal);
    const extraTables = (await plan.extra?.create(connection)) ?? [];
    tables = [{ name: "events", columns: [...EVENTS_COLUMNS] }, ...scenarioTables, ...extraTables];
    const allowed = [...plan.events.flatMap(eventsFilePaths), ...(plan.extra?.paths ?? [])].map(
      sqlString,
    );
    if (allowed.length > 0) await connection.run(`SET allowed_paths = [${allowed.join(", ")}]`);
    await connection.run("SET enable_external_access = false");
    await connection.run("SET lock_configuration = true");
  } catch (error) {
    connection?.closeSync();
    instance.closeSync();
    throw error;
  }
  const open = connection;
  return {
    connection: open,
    tables,
    close() {
      open.closeSync();
      instance.closeSync();
    },
  };
}
