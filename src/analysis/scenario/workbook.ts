import { AnalysisError } from "../errors.js";
import { safeText } from "../safe-text.js";
import {
  cellNumber,
  cellText,
  type DailySheet,
  findHeaderRow,
  type Grid,
  matchDailySheets,
  readDailySheet,
  readGrids,
  rowTexts,
} from "./sheets.js";
import { readCheckedZip } from "./zip-guard.js";

/** One row of the summary sheet: a message node and its totals keyed by metric header. */
export interface ScenarioSummaryRow {
  number: number;
  nodeId: string;
  channel: string;
  branch: string;
  totals: Record<string, number>;
}

/** A scenario workbook as read (spec 2.5): summary rows and, by index, each one's daily sheet. */
export interface ScenarioWorkbook {
  /** The summary sheet's header texts, made safe. */
  header: string[];
  metricColumns: string[];
  rows: ScenarioSummaryRow[];
  sheetOf: (DailySheet | undefined)[];
  warnings: string[];
}

/**
 * Reads a scenario export within the zip guard's bounds: the summary sheet (found by its header),
 * the daily sheets, and which daily sheet belongs to which node. Shared by the summary and by
 * the query tables.
 */
export async function readScenarioWorkbook(
  path: string,
  bytes: number,
  signal?: AbortSignal,
): Promise<ScenarioWorkbook> {
  const parts = await readCheckedZip(path, bytes, undefined, signal);
  const grids = readGrids(parts);
  parts.clear();
  const isSummaryHeader = (t: string[]) =>
    t[0] === "#" && t.includes("채널") && t.includes("메시지 노드 ID");
  let summary: Grid | undefined;
  let headerIndex = -1;
  for (const grid of grids) {
    headerIndex = findHeaderRow(grid, isSummaryHeader);
    if (headerIndex >= 0) {
      summary = grid;
      break;
    }
  }
  if (summary === undefined) {
    throw new AnalysisError(
      "Not a scenario export: no sheet has the summary header (#, 채널, A/B 테스트 분기, 메시지 노드 ID, then the metric columns). Check that the file is a scenario_daily_metrics export.",
      "not_scenario_export",
    );
  }
  // Header texts become result keys and table headers: made safe once, here.
  const header = rowTexts((summary.rows[headerIndex] as Grid["rows"][number]).cells).map((h) =>
    safeText(h, 80),
  );
  const col = (name: string, fallback: number) => {
    const i = header.indexOf(name);
    return i >= 0 ? i : fallback;
  };
  const cNumber = 0;
  const cChannel = col("채널", 1);
  const cBranch = col("A/B 테스트 분기", 2);
  const cNode = col("메시지 노드 ID", 3);
  const metricColumns = header.slice(4).filter((h) => h !== "");
  const warnings: string[] = [];

  const daily: DailySheet[] = [];
  for (const grid of grids) {
    if (grid === summary) continue;
    const d = readDailySheet(grid, warnings);
    if (d) daily.push(d);
    else
      warnings.push(`Sheet "${safeText(grid.name, 60)}" has no 날짜 header row and was skipped.`);
  }

  const summaryRows: ScenarioSummaryRow[] = [];
  for (let i = headerIndex + 1; i < summary.rows.length; i++) {
    const { r, cells } = summary.rows[i] as Grid["rows"][number];
    const numberText = cellText(cells[cNumber] ?? null);
    if (numberText === "") continue;
    const number = Number(numberText.replace(/^#/, ""));
    if (!Number.isInteger(number)) {
      warnings.push(`Summary row ${r} has a non-numeric # and was skipped.`);
      continue;
    }
    const totals: Record<string, number> = {};
    for (let c = 4; c < header.length; c++) {
      const key = header[c];
      if (key) totals[key] = cellNumber(cells[c] ?? null);
    }
    summaryRows.push({
      number,
      nodeId: safeText(cellText(cells[cNode] ?? null), 120),
      channel: safeText(cellText(cells[cChannel] ?? null), 40),
      branch: safeText(cellText(cells[cBranch] ?? null), 120),
      totals,
    });
  }
  const sheetOf = matchDailySheets(summaryRows, daily);
  return { header, metricColumns, rows: summaryRows, sheetOf, warnings };
}
