import { join } from "node:path";
import type { DuckDBConnection } from "@duckdb/node-api";
import { eventRoleSql } from "../analysis/event-roles.js";
import { CAMPAIGN_CSV_COLUMNS } from "../api/csv-columns.js";
import { columnType, sqlIdentifier, sqlString } from "../query/events-view.js";
import type { ExtraTables } from "../query/session.js";
import type { TableColumns } from "../query/sql-hints.js";
import { historyCampaigns } from "./campaigns.js";
import { eventsPartitions, type HistoryCatalogue, scenarioPartitions } from "./catalogue.js";
import { fileListSql, typedEventColumnsSql } from "./parquet.js";
import { SCENARIO_DAY_COLUMNS } from "./scenario-write.js";

/**
 * The history's tables in a query session, over exactly the files the catalogue names:
 * - `history`: every kept event, the file's 13 columns typed as in `events`, `campaign_id`,
 *   `job_id`, and `event_role` by summarize_export's rules (analysis/event-roles.ts);
 * - `history_campaigns`: one row per campaign (from the catalogue, no file read);
 * - `history_scenario_days`: the scenario exports' daily metrics, one row per node and day.
 */
export const HISTORY_COLUMNS = [...CAMPAIGN_CSV_COLUMNS, "campaign_id", "job_id", "event_role"];

const CAMPAIGN_COLUMNS: readonly (readonly [string, string])[] = [
  ["campaign_id", "VARCHAR"],
  ["name", "VARCHAR"],
  ["channels", "VARCHAR[]"],
  ["rounds", "BIGINT"],
  ["first_scheduled_at", "TIMESTAMP"],
  ["last_scheduled_at", "TIMESTAMP"],
  ["rows", "BIGINT"],
  ["exports", "VARCHAR[]"],
];

/** The files a session over `catalogue` reads (absolute). */
export function historyFiles(folder: string, catalogue: HistoryCatalogue): string[] {
  return catalogue.partitions.map((p) => join(folder, p.file));
}

export function historyTables(
  folder: string,
  catalogue: HistoryCatalogue,
  conversionType: string | undefined,
): ExtraTables {
  return {
    paths: historyFiles(folder, catalogue),
    async create(connection: DuckDBConnection): Promise<TableColumns[]> {
      await connection.run(historyViewSql(folder, catalogue, conversionType));
      for (const sql of campaignsTableSql(catalogue)) await connection.run(sql);
      await connection.run(scenarioDaysViewSql(folder, catalogue));
      return [
        { name: "history", columns: HISTORY_COLUMNS },
        { name: "history_campaigns", columns: CAMPAIGN_COLUMNS.map(([n]) => n) },
        {
          name: "history_scenario_days",
          columns: ["scenario_id", ...SCENARIO_DAY_COLUMNS.map(([n]) => n)],
        },
      ];
    },
  };
}

function historyViewSql(
  folder: string,
  catalogue: HistoryCatalogue,
  conversionType: string | undefined,
): string {
  const files = eventsPartitions(catalogue).map((p) => join(folder, p.file));
  const role = `${eventRoleSql("event_type", conversionType)} AS event_role`;
  const rows =
    files.length === 0
      ? `SELECT ${CAMPAIGN_CSV_COLUMNS.map((c) => `CAST(NULL AS ${columnType(c)}) AS ${sqlIdentifier(c)}`).join(", ")}, CAST(NULL AS VARCHAR) AS campaign_id, CAST(NULL AS VARCHAR) AS job_id WHERE false`
      : `SELECT ${typedEventColumnsSql()}, campaign_id, job_id FROM read_parquet(${fileListSql(files)}, hive_partitioning = true, hive_types = {'campaign_id': VARCHAR, 'round_month': VARCHAR})`;
  return `CREATE VIEW history AS SELECT *, ${role} FROM (${rows})`;
}

function campaignsTableSql(catalogue: HistoryCatalogue): string[] {
  const columns = CAMPAIGN_COLUMNS.map(([n, t]) => `${sqlIdentifier(n)} ${t}`).join(", ");
  // DuckDB's parser ends a statement at a NUL character: a name holding one loses it.
  const literal = (v: string) => sqlString(v.replaceAll("\0", ""));
  const text = (v: string | null) => (v === null ? "CAST(NULL AS VARCHAR)" : literal(v));
  const list = (v: string[]) => `CAST([${v.map(literal).join(", ")}] AS VARCHAR[])`;
  const rows = historyCampaigns(catalogue).map(
    (c) =>
      `(${[
        literal(c.campaign_id),
        text(c.name),
        list(c.channels),
        c.rounds,
        `TIMESTAMP ${sqlString(c.first_scheduled_at)}`,
        `TIMESTAMP ${sqlString(c.last_scheduled_at)}`,
        c.rows,
        list(c.exports),
      ].join(", ")})`,
  );
  const create = `CREATE TABLE history_campaigns (${columns})`;
  return rows.length === 0
    ? [create]
    : [create, `INSERT INTO history_campaigns VALUES ${rows.join(", ")}`];
}

function scenarioDaysViewSql(folder: string, catalogue: HistoryCatalogue): string {
  const files = scenarioPartitions(catalogue).map((p) => join(folder, p.file));
  const names = SCENARIO_DAY_COLUMNS.map(([n]) => sqlIdentifier(n)).join(", ");
  const rows =
    files.length === 0
      ? `SELECT CAST(NULL AS VARCHAR) AS scenario_id, ${SCENARIO_DAY_COLUMNS.map(([n, t]) => `CAST(NULL AS ${t}) AS ${sqlIdentifier(n)}`).join(", ")} WHERE false`
      : `SELECT scenario_id, ${names} FROM read_parquet(${fileListSql(files)}, hive_partitioning = true, hive_types = {'scenario_id': VARCHAR})`;
  return `CREATE VIEW history_scenario_days AS ${rows}`;
}
