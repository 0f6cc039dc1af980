import type { DuckDBConnection } from "@duckdb/node-api";
import { readScenarioWorkbook, type ScenarioWorkbook } from "../analysis/scenario/workbook.js";
import type { DuckDb } from "./engine.js";
import { sqlIdentifier } from "./events-view.js";
import type { QuerySource } from "./sources.js";
import type { TableColumns } from "./sql-hints.js";

/**
 * Scenario XLSX exports as two tables (DuckDB's own excel reader would need an extension
 * install, which the query sessions forbid): `scenario_nodes`, one row per summary-sheet row, and
 * `scenario_days`, one row per day of a node's daily sheet. Every metric keeps its Korean header
 * as a column and, for the spec's metrics, has an English alias beside it.
 */

/** English aliases of spec 2.5's metric headers (and the summary's lead columns). */
export const METRIC_ALIASES: Record<string, string> = {
  "발송 수(건)": "sends",
  "발송 수(명)": "send_users",
  "오픈 수(건)": "opens",
  "오픈 수(명)": "open_users",
  "오픈율(건)": "open_rate",
  "오픈율(명)": "open_user_rate",
  "전환 수(건)": "conversions",
  "전환 수(명)": "conversion_users",
  "전환율(건)": "conversion_rate",
  "전환율(명)": "conversion_user_rate",
  "전환 수익": "revenue",
  "집행 비용": "cost",
  ROAS: "roas",
  객단가: "revenue_per_conversion",
  CAC: "cac",
};

const NODE_LEADS = [
  ["job_id", "VARCHAR"],
  ["file", "VARCHAR"],
  ["number", "INTEGER"],
  ["channel", "VARCHAR"],
  ["branch", "VARCHAR"],
  ["node_id", "VARCHAR"],
] as const;
const DAY_LEADS = [
  ["job_id", "VARCHAR"],
  ["file", "VARCHAR"],
  ["number", "INTEGER"],
  ["node_id", "VARCHAR"],
  ["date", "DATE"],
] as const;

/** Each metric header once, in first-seen order, with its alias when it has one. */
function metricColumns(books: ScenarioWorkbook[]): { header: string; alias?: string }[] {
  // DuckDB's column names ignore case: ROAS and roas would be one name.
  const seen = new Set<string>([
    "job_id",
    "file",
    "number",
    "channel",
    "branch",
    "node_id",
    "date",
  ]);
  const out: { header: string; alias?: string }[] = [];
  for (const book of books) {
    for (const header of book.metricColumns) {
      if (seen.has(header.toLowerCase())) continue;
      seen.add(header.toLowerCase());
      const alias = METRIC_ALIASES[header];
      if (alias !== undefined && !seen.has(alias)) {
        seen.add(alias);
        out.push({ header, alias });
      } else out.push({ header });
    }
  }
  return out;
}

function tableSql(name: string, leads: readonly (readonly [string, string])[], metrics: string[]) {
  const columns = [
    ...leads.map(([n, t]) => `${sqlIdentifier(n)} ${t}`),
    ...metrics.map((m) => `${sqlIdentifier(m)} DOUBLE`),
  ];
  return `CREATE TABLE ${name} (${columns.join(", ")})`;
}

function dateParts(text: string): { year: number; month: number; day: number } | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  return m ? { year: Number(m[1]), month: Number(m[2]), day: Number(m[3]) } : null;
}

/** Makes and fills scenario_nodes and scenario_days; returns their columns, for error hints. */
export async function loadScenarioTables(
  duck: DuckDb,
  connection: DuckDBConnection,
  sources: QuerySource[],
  signal?: AbortSignal,
): Promise<TableColumns[]> {
  const books: { source: QuerySource; book: ScenarioWorkbook }[] = [];
  for (const source of sources) {
    books.push({ source, book: await readScenarioWorkbook(source.path, source.bytes, signal) });
  }
  const metrics = metricColumns(books.map((b) => b.book));
  const names = metrics.flatMap((m) => (m.alias ? [m.header, m.alias] : [m.header]));
  await connection.run(tableSql("scenario_nodes", NODE_LEADS, names));
  await connection.run(tableSql("scenario_days", DAY_LEADS, names));
  const nodes = await connection.createAppender("scenario_nodes");
  const days = await connection.createAppender("scenario_days");
  const text = (appender: typeof nodes, value: string | null) =>
    value === null || value === "" ? appender.appendNull() : appender.appendVarchar(value);
  const values = (appender: typeof nodes, row: Record<string, number>) => {
    for (const m of metrics) {
      const v = row[m.header];
      for (let k = 0; k < (m.alias ? 2 : 1); k++) {
        if (v === undefined) appender.appendNull();
        else appender.appendDouble(v);
      }
    }
  };
  try {
    for (const { source, book } of books) {
      book.rows.forEach((row, k) => {
        text(nodes, source.jobId);
        nodes.appendVarchar(source.path);
        nodes.appendInteger(row.number);
        text(nodes, row.channel);
        text(nodes, row.branch);
        text(nodes, row.nodeId);
        values(nodes, row.totals);
        nodes.endRow();
        for (const day of book.sheetOf[k]?.rows ?? []) {
          text(days, source.jobId);
          days.appendVarchar(source.path);
          days.appendInteger(row.number);
          text(days, row.nodeId);
          const parts = dateParts(day.date);
          if (parts === null) days.appendNull();
          else days.appendDate(duck.dateValue(parts));
          values(days, day.values);
          days.endRow();
        }
      });
    }
    nodes.flushSync();
    days.flushSync();
  } finally {
    nodes.closeSync();
    days.closeSync();
  }
  return [
    { name: "scenario_nodes", columns: [...NODE_LEADS.map(([n]) => n), ...names] },
    { name: "scenario_days", columns: [...DAY_LEADS.map(([n]) => n), ...names] },
  ];
}
