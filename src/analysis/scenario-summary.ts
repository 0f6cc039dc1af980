import type ExcelJS from "exceljs";
import { AnalysisError } from "./errors.js";
import type { ScenarioNode, ScenarioSummary } from "./schemas.js";
import { ratio, round6, twoProportionTest } from "./stats.js";
import { inspectZip } from "./zip-guard.js";

/**
 * Scenario XLSX summary (spec 2.5). The zip is checked by zip-guard first; the workbook is then
 * read whole with exceljs, which the guard's caps keep small (a scenario export is a few sheets
 * of at most one row per day).
 */

const SEND = "발송 수(건)";
const SEND_USERS = "발송 수(명)";
const OPEN = "오픈 수(건)";
const OPEN_USERS = "오픈 수(명)";
const CONV = "전환 수(건)";
const CONV_USERS = "전환 수(명)";
const REVENUE = "전환 수익";
const COST = "집행 비용";
/** Columns that add up over days: 건 counts and money. 명 columns count distinct users per
 * period, so a node's 명 total may be below the sum of its days and is not checked. */
const ADDITIVE = new Set([SEND, OPEN, CONV, REVENUE, COST]);
const BRANCH_SEPARATOR = "·";
const HEADER_SCAN_ROWS = 30;

type CellValue = ExcelJS.CellValue;

function cellText(value: CellValue): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value.trim();
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (value instanceof Date) return value.toISOString().slice(0, 10);
  if (typeof value === "object") {
    if ("richText" in value && Array.isArray(value.richText)) {
      return value.richText
        .map((r) => r.text)
        .join("")
        .trim();
    }
    if ("result" in value) return cellText(value.result as CellValue);
    if ("text" in value && typeof value.text === "string") return value.text.trim();
  }
  return "";
}

function cellNumber(value: CellValue): number {
  if (typeof value === "number") return value;
  if (value !== null && typeof value === "object" && "result" in value) {
    return cellNumber(value.result as CellValue);
  }
  const text = cellText(value).replace(/,/g, "");
  const n = text === "" ? 0 : Number(text.endsWith("%") ? text.slice(0, -1) : text);
  return Number.isFinite(n) ? (text.endsWith("%") ? n / 100 : n) : 0;
}

function rowTexts(sheet: ExcelJS.Worksheet, rowNumber: number): string[] {
  const row = sheet.getRow(rowNumber);
  const out: string[] = [];
  for (let c = 1; c <= row.cellCount; c++) out.push(cellText(row.getCell(c).value));
  return out;
}

function findHeaderRow(sheet: ExcelJS.Worksheet, test: (texts: string[]) => boolean): number {
  const last = Math.min(sheet.rowCount, HEADER_SCAN_ROWS);
  for (let r = 1; r <= last; r++) if (test(rowTexts(sheet, r))) return r;
  return -1;
}

interface DailySheet {
  name: string;
  number: number | null;
  nodeIdsNearTitle: string[];
  rows: { date: string; values: Record<string, number> }[];
}

function readDailySheet(sheet: ExcelJS.Worksheet, warnings: string[]): DailySheet | null {
  const headerRow = findHeaderRow(sheet, (t) => t[0] === "날짜");
  if (headerRow < 0) return null;
  const header = rowTexts(sheet, headerRow);
  const titleTexts: string[] = [];
  for (let r = 1; r < headerRow; r++)
    titleTexts.push(...rowTexts(sheet, r).filter((t) => t !== ""));
  const rows: DailySheet["rows"] = [];
  for (let r = headerRow + 1; r <= sheet.rowCount; r++) {
    const row = sheet.getRow(r);
    const date = cellText(row.getCell(1).value);
    if (date === "") continue;
    const values: Record<string, number> = {};
    for (let c = 2; c <= header.length; c++) {
      const key = header[c - 1];
      if (key) values[key] = cellNumber(row.getCell(c).value);
    }
    rows.push({ date, values });
  }
  const m = /^#\s*(\d+)/.exec(sheet.name);
  if (m === null) warnings.push(`Daily sheet "${sheet.name}" has no #number in its name.`);
  return {
    name: sheet.name,
    number: m ? Number(m[1]) : null,
    nodeIdsNearTitle: titleTexts,
    rows: rows.sort((a, b) => a.date.localeCompare(b.date)),
  };
}

function trendOf(rows: DailySheet["rows"]): ScenarioNode["trend"] {
  if (rows.length === 0) return null;
  const total = (k: string) => rows.reduce((a, r) => a + (r.values[k] ?? 0), 0);
  const metric = total(SEND) > 0 || total(OPEN) === 0 ? SEND : OPEN;
  let best = rows[0] as DailySheet["rows"][number];
  let worst = best;
  for (const r of rows) {
    if ((r.values[metric] ?? 0) > (best.values[metric] ?? 0)) best = r;
    if ((r.values[metric] ?? 0) < (worst.values[metric] ?? 0)) worst = r;
  }
  const half = Math.floor(rows.length / 2);
  const avg = (part: DailySheet["rows"]) =>
    part.length === 0 ? 0 : part.reduce((a, r) => a + (r.values[metric] ?? 0), 0) / part.length;
  const first = avg(rows.slice(0, half));
  const second = avg(rows.slice(rows.length - half));
  let direction: "up" | "down" | "flat" = "flat";
  if (half > 0 && second > first * 1.05 && second - first > 0) direction = "up";
  else if (half > 0 && second < first * 0.95) direction = "down";
  return {
    metric,
    best_day: { date: best.date, value: best.values[metric] ?? 0 },
    worst_day: { date: worst.date, value: worst.values[metric] ?? 0 },
    first_half_average: round6(first),
    second_half_average: round6(second),
    direction,
  };
}

/** Ratio columns recomputed from summed counts with the spec's formulas (0 for 0 denominators). */
function withRatios(t: Record<string, number>): Record<string, number> {
  const v = (k: string) => t[k] ?? 0;
  return {
    ...t,
    "오픈율(건)": round6(ratio(v(OPEN), v(SEND))),
    "오픈율(명)": round6(ratio(v(OPEN_USERS), v(SEND_USERS))),
    "전환율(건)": round6(ratio(v(CONV), v(OPEN))),
    "전환율(명)": round6(ratio(v(CONV_USERS), v(OPEN_USERS))),
    ROAS: round6(ratio(v(REVENUE), v(COST))),
    객단가: round6(ratio(v(REVENUE), v(CONV))),
    CAC: round6(ratio(v(COST), v(CONV))),
  };
}

const RATIO_COLUMNS = new Set([
  "오픈율(건)",
  "오픈율(명)",
  "전환율(건)",
  "전환율(명)",
  "ROAS",
  "객단가",
  "CAC",
]);

function branchReadout(nodes: ScenarioNode[]): ScenarioSummary["branches"] {
  const branches = [...new Set(nodes.map((n) => n.branch).filter((b) => b !== ""))];
  // Every prefix of a branch path is a branch too ("B·A" implies "B").
  for (const b of [...branches]) {
    const parts = b.split(BRANCH_SEPARATOR);
    for (let i = 1; i < parts.length; i++) branches.push(parts.slice(0, i).join(BRANCH_SEPARATOR));
  }
  const byParent = new Map<string, Set<string>>();
  for (const b of new Set(branches)) {
    const cut = b.lastIndexOf(BRANCH_SEPARATOR);
    const parent = cut < 0 ? "" : b.slice(0, cut);
    const set = byParent.get(parent) ?? new Set<string>();
    set.add(b);
    byParent.set(parent, set);
  }
  const out: ScenarioSummary["branches"] = [];
  for (const [parent, armSet] of [...byParent.entries()].sort((a, b) => a[0].localeCompare(b[0]))) {
    const arms = [...armSet].sort().map((arm) => {
      // An arm covers its own nodes and those of branches nested inside it.
      const inArm = nodes.filter(
        (n) => n.branch === arm || n.branch.startsWith(arm + BRANCH_SEPARATOR),
      );
      const s = (k: string) => inArm.reduce((a, n) => a + (n.totals[k] ?? 0), 0);
      return {
        branch: arm,
        sends: s(SEND),
        open_rate: round6(ratio(s(OPEN), s(SEND))),
        conversion_rate: round6(ratio(s(CONV), s(OPEN))),
        sendUsers: s(SEND_USERS),
        openUsers: s(OPEN_USERS),
      };
    });
    if (arms.length < 2) continue;
    const where = parent === "" ? "At the first split" : `Inside branch ${parent}`;
    const ranked = [...arms].sort((a, b) => b.open_rate - a.open_rate);
    const top = ranked[0] as (typeof arms)[number];
    const next = ranked[1] as (typeof arms)[number];
    const test =
      arms.length === 2
        ? twoProportionTest(top.openUsers, top.sendUsers, next.openUsers, next.sendUsers)
        : null;
    const rates = arms
      .map(
        (a) =>
          `${a.branch} ${(a.open_rate * 100).toFixed(1)}% open of ${a.sends} sends, ${(a.conversion_rate * 100).toFixed(1)}% conversion`,
      )
      .join(" vs ");
    const sig =
      test === null
        ? ""
        : test.significant
          ? ` (open rate difference significant at 95%, p = ${test.p_value}, by users)`
          : ` (not significant at 95%, p = ${test.p_value}, by users)`;
    const verdict =
      top.sends === 0 && next.sends === 0
        ? `${where}: no sends in ${arms.map((a) => a.branch).join(" or ")} yet.`
        : `${where}: ${rates}; ${top.branch} leads on open rate${sig}.`;
    out.push({
      parent,
      arms: arms.map(({ branch, sends, open_rate, conversion_rate }) => ({
        branch,
        sends,
        open_rate,
        conversion_rate,
      })),
      verdict,
    });
  }
  return out;
}

export async function summarizeScenarioXlsx(
  path: string,
  bytes: number,
  signal?: AbortSignal,
): Promise<ScenarioSummary> {
  await inspectZip(path, bytes, undefined, signal);
  // Loaded on demand: exceljs is large, and campaign summaries (the hot path) never need it.
  const { default: excel } = await import("exceljs");
  const workbook = new excel.Workbook();
  try {
    await workbook.xlsx.readFile(path);
  } catch {
    throw new AnalysisError(
      "The .xlsx file could not be read as a workbook (damaged or not an Excel file). Export the scenario again.",
      "malformed_xlsx",
    );
  }
  const sheets = workbook.worksheets;
  const isSummaryHeader = (t: string[]) =>
    t[0] === "#" && t.includes("채널") && t.includes("메시지 노드 ID");
  let summarySheet: ExcelJS.Worksheet | undefined;
  let headerRow = -1;
  for (const sheet of sheets) {
    headerRow = findHeaderRow(sheet, isSummaryHeader);
    if (headerRow > 0) {
      summarySheet = sheet;
      break;
    }
  }
  if (summarySheet === undefined) {
    throw new AnalysisError(
      "Not a scenario export: no sheet has the summary header (#, 채널, A/B 테스트 분기, 메시지 노드 ID, then the metric columns). Check that the file is a scenario_daily_metrics export.",
      "not_scenario_export",
    );
  }
  const header = rowTexts(summarySheet, headerRow);
  const col = (name: string, fallback: number) => {
    const i = header.indexOf(name);
    return i >= 0 ? i + 1 : fallback;
  };
  const cNumber = 1;
  const cChannel = col("채널", 2);
  const cBranch = col("A/B 테스트 분기", 3);
  const cNode = col("메시지 노드 ID", 4);
  const metricColumns = header.slice(4).filter((h) => h !== "");
  const warnings: string[] = [];

  const daily: DailySheet[] = [];
  for (const sheet of sheets) {
    if (sheet === summarySheet) continue;
    const d = readDailySheet(sheet, warnings);
    if (d) daily.push(d);
    else warnings.push(`Sheet "${sheet.name}" has no 날짜 header row and was skipped.`);
  }

  const nodes: ScenarioNode[] = [];
  for (let r = headerRow + 1; r <= summarySheet.rowCount; r++) {
    const row = summarySheet.getRow(r);
    const numberText = cellText(row.getCell(cNumber).value);
    if (numberText === "") continue;
    const number = Number(numberText.replace(/^#/, ""));
    if (!Number.isInteger(number)) {
      warnings.push(`Summary row ${r} has a non-numeric # and was skipped.`);
      continue;
    }
    const totals: Record<string, number> = {};
    for (let c = 5; c <= header.length; c++) {
      const key = header[c - 1];
      if (key) totals[key] = cellNumber(row.getCell(c).value);
    }
    const nodeId = cellText(row.getCell(cNode).value);
    // Match by the node ID written under the title, else by the #number in the sheet name.
    const sheet =
      daily.find((d) => nodeId !== "" && d.nodeIdsNearTitle.some((t) => t.includes(nodeId))) ??
      daily.find((d) => d.number === number);
    const mismatches: ScenarioNode["mismatches"] = [];
    if (sheet) {
      for (const metric of metricColumns) {
        if (!ADDITIVE.has(metric)) continue;
        const sum = sheet.rows.reduce((a, d) => a + (d.values[metric] ?? 0), 0);
        const expected = totals[metric] ?? 0;
        if (Math.abs(sum - expected) > 1e-6 * Math.max(1, Math.abs(expected))) {
          mismatches.push({ metric, summary: expected, daily_sum: round6(sum) });
        }
      }
    } else {
      warnings.push(`Node #${number} has no daily sheet.`);
    }
    nodes.push({
      number,
      channel: cellText(row.getCell(cChannel).value),
      branch: cellText(row.getCell(cBranch).value),
      node_id: nodeId,
      totals,
      days: sheet ? sheet.rows.length : 0,
      sheet: sheet ? sheet.name : null,
      trend: sheet ? trendOf(sheet.rows) : null,
      mismatches,
    });
  }

  const summed: Record<string, number> = {};
  for (const metric of metricColumns) {
    if (RATIO_COLUMNS.has(metric)) continue;
    summed[metric] = round6(nodes.reduce((a, n) => a + (n.totals[metric] ?? 0), 0));
  }
  const totals = withRatios(summed);
  const branches = branchReadout(nodes);
  const result: ScenarioSummary = {
    kind: "scenario_daily_metrics",
    summary: "",
    nodes,
    file: { path, bytes },
    metric_columns: metricColumns,
    totals,
    branches,
    warnings,
  };
  const mismatched = nodes.filter((n) => n.mismatches.length > 0).length;
  result.summary = [
    `${nodes.length} message node(s)`,
    `${totals[SEND] ?? 0} sends, open rate ${((totals["오픈율(건)"] ?? 0) * 100).toFixed(1)}%, ${totals[CONV] ?? 0} conversions (${((totals["전환율(건)"] ?? 0) * 100).toFixed(1)}% of opens)`,
    mismatched === 0
      ? "summary rows match the daily sheets"
      : `${mismatched} node(s) differ from their daily sheets`,
    ...(branches[0] ? [branches[0].verdict] : []),
  ].join("; ");
  return result;
}
