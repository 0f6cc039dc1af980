import type { DuckDBConnection, DuckDBPreparedStatement } from "@duckdb/node-api";
import type { DuckDb } from "./engine.js";
import { QueryError } from "./errors.js";
import type { QuerySession } from "./session.js";
import { sqlError } from "./sql-hints.js";

/**
 * Accepts exactly one read-only query, judged by DuckDB's own parser rather than by patterns
 * over the text (a comment or a string literal cannot hide a second statement from it):
 * 1. the parser must find one statement;
 * 2. the parser must be able to serialize it as a SELECT (`json_serialize_sql` refuses PRAGMA,
 *    CALL, SET, COPY, ATTACH, INSTALL, LOAD, EXPLAIN and every write);
 * 3. prepared, its statement type must be SELECT.
 * The session's settings (allowed_paths, no external access, locked configuration) stand behind
 * this, so a table function that reads files still only sees the chosen exports.
 */
export async function prepareReadOnly(
  duck: DuckDb,
  session: QuerySession,
  sql: string,
): Promise<DuckDBPreparedStatement> {
  const connection = session.connection;
  const context = { sql, tables: session.tables };
  if (sql.trim() === "") {
    throw new QueryError("sql is empty; give one SELECT statement.", "bad_input");
  }
  let count: number;
  let extracted: Awaited<ReturnType<DuckDBConnection["extractStatements"]>>;
  try {
    extracted = await connection.extractStatements(sql);
    count = extracted.count;
  } catch (error) {
    throw sqlError(error, context);
  }
  if (count !== 1) {
    throw refused(
      count === 0
        ? "sql holds no statement (only comments or blanks)"
        : `sql holds ${count} statements (a comment or a ";" does not hide one from the parser)`,
    );
  }
  const check = await connection.runAndReadAll(
    "SELECT json_extract_string(json_serialize_sql($1::VARCHAR), '$.error') AS error",
    [sql],
  );
  if (check.getRowsJS()[0]?.[0] === "true") {
    throw refused(
      "the statement is not a query (only SELECT, WITH, FROM, VALUES, DESCRIBE, SUMMARIZE)",
    );
  }
  let prepared: DuckDBPreparedStatement;
  try {
    prepared = await extracted.prepare(0);
  } catch (error) {
    throw sqlError(error, context);
  }
  if (prepared.statementType !== duck.StatementType.SELECT) {
    prepared.destroySync();
    throw refused("the statement is not a read-only query");
  }
  return prepared;
}

function refused(why: string): QueryError {
  return new QueryError(
    `refused: ${why}. query_export runs one read-only SELECT over the chosen exports; writes, COPY, ATTACH, INSTALL/LOAD, SET, PRAGMA, CALL, EXPLAIN and several statements are refused, and no other file or URL can be read. Rewrite it as a single SELECT over events (or scenario_nodes / scenario_days).`,
    "refused_statement",
  );
}
