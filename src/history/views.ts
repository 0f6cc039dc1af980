import { join } from "node:path";
import type { DuckDBConnection } from "@duckdb/node-api";
import { eventRoleSql } from "../analysis/event-roles.js";
import { CAMPAIGN_CSV_COLUMNS } from "../api/csv-columns.js";
import { columnType, sqlIdentifier, sqlString } from "../query/events-view.js";
import type { ExtraTables } from "../query/session.js";
import type { TableColumns } from "../query/sql-hints.js";
import { historyCampaigns } from "./campaigns.js";
import {
  eventsPartitions,
  type HistoryCatalogue,
  partitionFiles,
  scenarioPartitions,
} from "./catalogue.js";
import { MESSAGE_FILE_COLUMNS, messagesSql, USER_KEY_PROBE_SQL } from "./messages.js";
import { fileListSql, typedEventColumnsSql } from "./parquet.js";
import { SCENARIO_DAY_COLUMNS } from "./scenario-write.js";

/**
 * The history's tables in a query session, over exactly the files the catalogue names:
 * - `history`: every kept event, the file's 13 columns typed as in `events`, `campaign_id`,
 *   `job_id`, and `event_role` by summarize_export's rules (analysis/event-roles.ts);
 * - `history_campaigns`: one row per campaign (from the catalogue, no file read);
 * - `history_messages`: one row per user and round (messages.ts), `campaign_id` and `received`
 *   beside the file's columns;
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

/** The columns of `history_messages` with their types. */
export const MESSAGE_COLUMNS: readonly (readonly [string, string])[] = [
  ["campaign_id", "VARCHAR"],
  ...MESSAGE_FILE_COLUMNS.slice(0, 7),
  ["received", "BOOLEAN"],
  ...MESSAGE_FILE_COLUMNS.slice(7),
];

/** The files a session over `catalogue` reads (absolute). */
export function historyFiles(folder: string, catalogue: HistoryCatalogue): string[] {
  return catalogue.partitions.flatMap(partitionFiles).map((f) => join(folder, f));
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
      const probe = await connection.runAndReadAll(USER_KEY_PROBE_SQL);
      const keyProbe = String(probe.getRows()[0]?.[0]);
      await connection.run(messagesViewSql(folder, catalogue, conversionType, keyProbe));
      await connection.run(scenarioDaysViewSql(folder, catalogue));
      return [
        { name: "history", columns: HISTORY_COLUMNS },
        { name: "history_campaigns", columns: CAMPAIGN_COLUMNS.map(([n]) => n) },
        { name: "history_messages", columns: MESSAGE_COLUMNS.map(([n]) => n) },
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
  return `CREATE VIEW history AS SELECT *, ${role} FROM (${eventsRowsSql(files)})`;
}

/** The typed rows of events files, with campaign_id (from the folder) and job_id. */
function eventsRowsSql(files: readonly string[]): string {
  return files.length === 0
    ? `SELECT ${CAMPAIGN_CSV_COLUMNS.map((c) => `CAST(NULL AS ${columnType(c)}) AS ${sqlIdentifier(c)}`).join(", ")}, CAST(NULL AS VARCHAR) AS campaign_id, CAST(NULL AS VARCHAR) AS job_id WHERE false`
    : `SELECT ${typedEventColumnsSql()}, campaign_id, job_id FROM read_parquet(${fileListSql(files)}, hive_partitioning = true, hive_types = {'campaign_id': VARCHAR, 'round_month': VARCHAR})`;
}

/**
 * `history_messages`: the messages files of the partitions that have one with this DuckDB's user
 * keys (`keyProbe`), when no conversion event type is asked for; the other partitions' (all of
 * them with a conversion type) grouped here from their events by the same rules.
 */
function messagesViewSql(
  folder: string,
  catalogue: HistoryCatalogue,
  conversionType: string | undefined,
  keyProbe: string,
): string {
  const partitions = eventsPartitions(catalogue);
  const kept =
    conversionType === undefined
      ? partitions.filter((p) => p.messages?.key_probe === keyProbe)
      : [];
  const files = kept.map((p) => join(folder, p.messages?.file as string));
  const fileNames = MESSAGE_FILE_COLUMNS.map(([n]) => sqlIdentifier(n)).join(", ");
  const parts: string[] = [];
  if (files.length > 0) {
    parts.push(
      `SELECT campaign_id, ${fileNames} FROM read_parquet(${fileListSql(files)}, hive_partitioning = true, hive_types = {'campaign_id': VARCHAR, 'round_month': VARCHAR})`,
    );
  }
  const rest = partitions.filter((p) => !kept.includes(p)).map((p) => join(folder, p.file));
  if (rest.length > 0) {
    const events = `(SELECT *, ${eventRoleSql("event_type", conversionType)} AS event_role FROM (${eventsRowsSql(rest)}))`;
    parts.push(
      `SELECT campaign_id, ${fileNames} FROM (${messagesSql(events, { role: "event_role", keys: ["campaign_id"] })})`,
    );
  }
  const names = MESSAGE_COLUMNS.map(([n]) => sqlIdentifier(n)).join(", ");
  const rows =
    parts.length === 0
      ? `SELECT ${MESSAGE_COLUMNS.map(([n, t]) => `CAST(NULL AS ${t}) AS ${sqlIdentifier(n)}`).join(", ")} WHERE false`
      : `SELECT ${names} FROM (SELECT *, received_at IS NOT NULL AS received FROM (${parts.join(" UNION ALL ")}))`;
  return `CREATE VIEW history_messages AS ${rows}`;
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
