import { join } from "node:path";
import type { ScenarioWorkbook } from "../analysis/scenario/workbook.js";
import { sqlIdentifier, sqlString } from "../query/events-view.js";
import { METRIC_ALIASES } from "../query/scenario-tables.js";
import {
  compareExports,
  type ExportRecord,
  type HistoryCatalogue,
  type ScenarioExportRecord,
  type ScenarioPartition,
  scenarioPartitions,
} from "./catalogue.js";
import type { StagedPartition } from "./commit.js";
import { scenarioPartitionDir } from "./layout.js";
import { fileListSql, PARQUET_OPTIONS } from "./parquet.js";
import type { WorkEngine } from "./work-engine.js";

/**
 * Scenario XLSX exports in the history: one table of daily metrics, a row per message node and
 * day (`scenario_days/scenario_id=<id>/`), with the spec's metrics under their English names
 * (a fixed schema for any reader; a header the spec does not list is left out). A node's day is
 * kept from the newest export that holds it, as a campaign's round is; the node is its ID (its
 * number when the ID is empty).
 */

/** The columns of a scenario_days file, in order, with their types. */
export const SCENARIO_DAY_COLUMNS: readonly (readonly [string, string])[] = [
  ["job_id", "VARCHAR"],
  ["number", "INTEGER"],
  ["channel", "VARCHAR"],
  ["branch", "VARCHAR"],
  ["node_id", "VARCHAR"],
  ["date", "DATE"],
  ...Object.values(METRIC_ALIASES).map((alias) => [alias, "DOUBLE"] as const),
];

const COLUMN_LIST = SCENARIO_DAY_COLUMNS.map(([name]) => sqlIdentifier(name)).join(", ");

/** A partition's new content: `sources` (live file, relative; staged, absolute) merged. */
export type ScenarioAction =
  | {
      kind: "rewrite";
      dir: string;
      scenarioId: string;
      sources: { live: string | null; staged: string[] };
      /** Exports whose rows may be kept, oldest first (a later one wins a node's day). */
      order: string[];
      cutoff: string;
    }
  | { kind: "drop"; dir: string };

/** Writes the workbook's daily rows to `path` (one Parquet file), returning how many. */
export async function stageScenarioWorkbook(
  engine: WorkEngine,
  book: ScenarioWorkbook,
  jobId: string,
  path: string,
): Promise<number> {
  // The date is appended as its text and cast by the copy (a bad date fails the export whole).
  const columns = SCENARIO_DAY_COLUMNS.map(
    ([n, t]) => `${sqlIdentifier(n)} ${n === "date" ? "VARCHAR" : t}`,
  ).join(", ");
  await engine.run(`CREATE OR REPLACE TEMP TABLE incoming_days (${columns})`);
  const appender = await engine.connection.createAppender("incoming_days");
  const headers = Object.keys(METRIC_ALIASES);
  let rows = 0;
  try {
    book.rows.forEach((node, k) => {
      for (const day of book.sheetOf[k]?.rows ?? []) {
        const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day.date);
        if (date === null) continue;
        appender.appendVarchar(jobId);
        appender.appendInteger(node.number);
        for (const text of [node.channel, node.branch, node.nodeId]) {
          if (text === "") appender.appendNull();
          else appender.appendVarchar(text);
        }
        appender.appendVarchar(day.date);
        for (const header of headers) {
          const value = day.values[header];
          if (value === undefined) appender.appendNull();
          else appender.appendDouble(value);
        }
        appender.endRow();
        rows += 1;
      }
    });
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
  const select = SCENARIO_DAY_COLUMNS.map(([n, t]) =>
    n === "date" ? `CAST("date" AS ${t}) AS "date"` : sqlIdentifier(n),
  ).join(", ");
  await engine.run(
    `COPY (SELECT ${select} FROM incoming_days) TO ${sqlString(path)} (${PARQUET_OPTIONS})`,
  );
  return rows;
}

/** The scenario's partition after adding the export of `record`, staged in `staged`. */
export function planScenarioAdd(
  catalogue: HistoryCatalogue,
  record: ScenarioExportRecord,
  staged: string,
  cutoff: string,
): ScenarioAction {
  const dir = scenarioPartitionDir(record.scenario_id);
  const live = scenarioPartitions(catalogue).find((p) => p.dir === dir);
  return {
    kind: "rewrite",
    dir,
    scenarioId: record.scenario_id,
    sources: { live: live?.file ?? null, staged: [staged] },
    order: exportOrder([...catalogue.exports, record]),
    cutoff,
  };
}

/** Scenario partitions holding days before the cutoff: rewritten without them, or dropped. */
export function planScenarioPrune(catalogue: HistoryCatalogue, cutoff: string): ScenarioAction[] {
  const actions: ScenarioAction[] = [];
  for (const p of scenarioPartitions(catalogue)) {
    if (p.first_date === null || p.first_date >= cutoff) continue;
    if (p.last_date === null || p.last_date < cutoff) actions.push({ kind: "drop", dir: p.dir });
    else {
      actions.push({
        kind: "rewrite",
        dir: p.dir,
        scenarioId: p.scenario_id,
        sources: { live: p.file, staged: [] },
        order: exportOrder(catalogue.exports),
        cutoff,
      });
    }
  }
  return actions;
}

/** The exports' job IDs, oldest first by the newest-wins order (compareExports). */
function exportOrder(exports: readonly ExportRecord[]): string[] {
  return [...exports].sort(compareExports).map((e) => e.job_id);
}

/** The actions' new files, and the partitions to drop (also those left with no day). */
export async function writeScenarioPartitions(
  engine: WorkEngine,
  folder: string,
  staging: string,
  actions: readonly ScenarioAction[],
): Promise<{ write: StagedPartition[]; drop: string[] }> {
  const write: StagedPartition[] = [];
  const drop: string[] = [];
  let n = 0;
  for (const action of actions) {
    if (action.kind === "drop") {
      drop.push(action.dir);
      continue;
    }
    const staged = join(staging, `scenario-${n++}.parquet`);
    const ranks = action.order.map((job, i) => `(${sqlString(job)}, ${i})`).join(", ");
    await engine.run(
      `CREATE OR REPLACE TEMP TABLE export_rank AS SELECT * FROM (VALUES ${ranks}) AS t(job_id, rank)`,
    );
    const sources = [
      ...(action.sources.live === null ? [] : [join(folder, action.sources.live)]),
      ...action.sources.staged,
    ];
    await engine.run(
      `COPY (SELECT ${COLUMN_LIST} FROM (SELECT d.*, row_number() OVER (PARTITION BY coalesce(d.node_id, '#' || d.number), d.date ORDER BY r.rank DESC) AS pick FROM read_parquet(${fileListSql(sources)}, hive_partitioning = false, union_by_name = true) d JOIN export_rank r USING (job_id) WHERE d.date >= DATE ${sqlString(action.cutoff)}) WHERE pick = 1 ORDER BY date, number) TO ${sqlString(staged)} (${PARQUET_OPTIONS})`,
    );
    const [facts] = await engine.rows(
      `SELECT count(*), strftime(min(date), '%Y-%m-%d'), strftime(max(date), '%Y-%m-%d'), list(DISTINCT job_id ORDER BY job_id) FROM read_parquet(${sqlString(staged)}, hive_partitioning = false)`,
    );
    const rows = Number(facts?.[0] ?? 0);
    if (rows === 0) {
      if (action.sources.live !== null) drop.push(action.dir);
      continue;
    }
    const record: Omit<ScenarioPartition, "file" | "bytes"> = {
      dataset: "scenario_days",
      dir: action.dir,
      scenario_id: action.scenarioId,
      rows,
      jobs: (facts?.[3] as string[] | null) ?? [],
      first_date: (facts?.[1] as string | null) ?? null,
      last_date: (facts?.[2] as string | null) ?? null,
    };
    write.push({ staged, record });
  }
  return { write, drop };
}
