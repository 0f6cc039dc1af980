import { QueryError } from "./errors.js";

/**
 * DuckDB, loaded on the first query only: its native binding is 68 MB, and a server that is never
 * asked a query (or a platform without a prebuilt binding) must not pay for it at start.
 */
export type DuckDb = typeof import("@duckdb/node-api");

let loading: Promise<DuckDb> | undefined;

export function loadDuckDb(importer?: () => Promise<DuckDb>): Promise<DuckDb> {
  // A given importer (a platform's missing binding, in tests) is tried as is, never cached.
  if (importer !== undefined) {
    return importer().catch((error: unknown) => {
      throw engineUnavailable(error);
    });
  }
  loading ??= import("@duckdb/node-api").catch((error: unknown) => {
    // Not cached: an install repaired while the server runs is picked up by the next query.
    loading = undefined;
    throw engineUnavailable(error);
  });
  return loading;
}

export function engineUnavailable(error: unknown): QueryError {
  const why = error instanceof Error ? error.message.split("\n")[0] : String(error);
  return new QueryError(
    `the SQL engine (DuckDB) could not be loaded on this platform (${process.platform}-${process.arch}): ${why}. DuckDB ships prebuilt bindings for Linux x64/arm64, macOS x64/arm64 and Windows x64. From an MCP Bundle, install the one built for this machine (crm-insights-mcp-${process.platform}-${process.arch}.mcpb); from npm, reinstall the package on this machine (npm ci or npm install), so npm fetches its binding. summarize_export does not need DuckDB and still works.`,
    "engine_unavailable",
  );
}
