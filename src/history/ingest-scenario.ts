import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { AnalysisError } from "../analysis/errors.js";
import { readScenarioWorkbook } from "../analysis/scenario/workbook.js";
import { checkExportFile, ExportFileError } from "../files/export-path.js";
import { withFileInUse } from "../files/in-use.js";
import {
  type HistoryCatalogue,
  type ScenarioExportRecord,
  scenarioPartitions,
} from "./catalogue.js";
import { commitPlanned } from "./commit.js";
import type { HistoryContext } from "./context.js";
import { HistoryError } from "./errors.js";
import { newStagingFolder } from "./layout.js";
import { trimmedExports } from "./prune.js";
import {
  planScenarioAdd,
  planScenarioPrune,
  stageScenarioWorkbook,
  writeScenarioPartitions,
} from "./scenario-write.js";
import { openWorkEngine } from "./work-engine.js";

/** A downloaded scenario XLSX export and what its job says about it. */
export interface ScenarioExportInput {
  path: string;
  jobId: string;
  scenarioId: string;
  window: { from?: string | null | undefined; to?: string | null | undefined };
  jobCreatedAt: string;
  signal?: AbortSignal | undefined;
}

export interface ScenarioIngestResult {
  job_id: string;
  status: "added" | "already_added";
  /** Daily rows of the workbook (one per node and day). */
  rows: number;
  /** Daily rows the history keeps for the scenario now, from every export. */
  scenario_rows: number;
}

export async function ingestScenarioExport(
  context: HistoryContext,
  input: ScenarioExportInput,
): Promise<ScenarioIngestResult> {
  const before = await context.store.read();
  const known = before.exports.find((e) => e.job_id === input.jobId);
  if (known !== undefined) return already(before, input, known.rows);
  const createdAt = Date.parse(input.jobCreatedAt);
  if (!Number.isFinite(createdAt)) {
    throw new TypeError(`jobCreatedAt must be an ISO 8601 time, got ${input.jobCreatedAt}`);
  }
  const file = await checkScenarioFile(input.path);
  const book = await withFileInUse(file.path, () =>
    readScenarioWorkbook(file.path, file.bytes, input.signal).catch((error: unknown) => {
      if (!(error instanceof AnalysisError)) throw error;
      throw new HistoryError(
        `${JSON.stringify(file.path)} cannot be added to the history: ${error.message}`,
        error.code === "not_scenario_export" ? "not_scenario_export" : "malformed_file",
      );
    }),
  );
  const staging = newStagingFolder(context.folder);
  await mkdir(staging, { recursive: true });
  const engine = await openWorkEngine(context.work, join(staging, "spill"), input.signal);
  try {
    const stagedFile = join(staging, "incoming.parquet");
    const rows = await stageScenarioWorkbook(engine, book, input.jobId, stagedFile);
    const dates = book.sheetOf.flatMap((s) => s?.rows.map((r) => r.date) ?? []).sort();
    const record: ScenarioExportRecord = {
      kind: "scenario_daily_metrics",
      job_id: input.jobId,
      scenario_id: input.scenarioId,
      window: { from: input.window.from ?? null, to: input.window.to ?? null },
      job_created_at: new Date(createdAt).toISOString(),
      ingested_at: new Date(context.now()).toISOString(),
      source: { path: file.path, bytes: file.bytes },
      rows,
      nodes: book.rows.length,
      first_date: dates[0] ?? null,
      last_date: dates.at(-1) ?? null,
    };
    for (let attempt = 0; attempt < 8; attempt++) {
      const base = await context.store.read();
      const seen = base.exports.find((e) => e.job_id === input.jobId);
      if (seen !== undefined) return already(base, input, seen.rows);
      const cutoff = context.cutoff();
      const add = planScenarioAdd(base, record, stagedFile, cutoff);
      const others = planScenarioPrune(base, cutoff).filter((a) => a.dir !== add.dir);
      const days = await writeScenarioPartitions(engine, context.folder, staging, [add, ...others]);
      const committed = await commitPlanned(context, {
        base,
        write: days.write,
        drop: days.drop,
        putExports: [...trimmedExports(base, cutoff), record],
      });
      if (committed !== undefined) return already(committed, input, rows, "added");
    }
    throw new HistoryError(
      `the history kept changing under other processes while ${input.jobId} was being added; nothing of it was added. Retry shortly.`,
      "busy",
    );
  } finally {
    engine.close();
    await rm(staging, { recursive: true, force: true });
  }
}

function already(
  catalogue: HistoryCatalogue,
  input: ScenarioExportInput,
  rows: number,
  status: ScenarioIngestResult["status"] = "already_added",
): ScenarioIngestResult {
  const partition = scenarioPartitions(catalogue).find((p) => p.scenario_id === input.scenarioId);
  return { job_id: input.jobId, status, rows, scenario_rows: partition?.rows ?? 0 };
}

async function checkScenarioFile(path: string): Promise<{ path: string; bytes: number }> {
  try {
    const file = await checkExportFile(path);
    if (file.kind === "scenario_xlsx") return file;
  } catch (error) {
    if (!(error instanceof ExportFileError)) throw error;
    throw new HistoryError(
      `not added to the history: ${error.message}`,
      error.code === "not_found" ? "not_found" : "malformed_file",
    );
  }
  throw new HistoryError(
    `${JSON.stringify(path)} is not a scenario XLSX export; it cannot be added to the scenario history.`,
    "not_scenario_export",
  );
}
