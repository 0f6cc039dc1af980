import { describe, expect, it } from "vitest";
import { errorText } from "../../src/mcp/error-text.js";
import { loadDuckDb } from "../../src/query/engine.js";
import { QueryError } from "../../src/query/errors.js";

/**
 * A platform without DuckDB's prebuilt binding cannot run here, so its import failure is
 * stood in for by an importer that throws as Node does for a missing native module.
 */
describe("loading DuckDB", () => {
  it("a missing binding is a clear error naming the supported platforms, and a later try loads", async () => {
    const missing = () =>
      Promise.reject(
        new Error("Cannot find module '@duckdb/node-bindings-freebsd-x64/duckdb.node'"),
      );
    const error = await loadDuckDb(missing).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueryError);
    expect((error as QueryError).code).toBe("engine_unavailable");
    const text = errorText(error, "query_export");
    expect(text).toContain("could not be loaded on this platform");
    expect(text).toContain("Linux x64/arm64");
    // A bundle user cannot run npm: the text names the bundle for this machine.
    expect(text).toContain(`crm-insights-mcp-${process.platform}-${process.arch}.mcpb`);
    expect(text).toContain("summarize_export does not need DuckDB");
    // Not cached: the real binding loads on the next call.
    const duck = await loadDuckDb();
    expect(typeof duck.DuckDBInstance.create).toBe("function");
  });
});
