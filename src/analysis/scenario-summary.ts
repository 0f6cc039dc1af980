import type ExcelJS from "exceljs";
import { formatCount, percent } from "../format.js";
import { AnalysisError } from "./errors.js";
import { safeText } from "./safe-text.js";
import type { ScenarioNode, ScenarioSummary } from "./schemas.js";
import { formatP, ratio, round6, twoProportionTest } from "./stats.js";
import { readCheckedZip, storedZip } from "./zip-guard.js";

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

/**
 * Most rows and columns a sheet may have. A daily sheet has one row per day and the summary one
 * row per message node; anything far larger is not a scenario export, and reading it cell by cell
 * would only cost memory.
 */
export const MAX_SHEET_ROWS = 5000;
export const MAX_SHEET_COLUMNS = 64;

/** A sheet's existing rows (in row order), each a dense array of its first columns' values. */
interface Grid {
  name: string;
  rows: { r: number; cells: CellValue[] }[];
}

function tooBig(sheet: string, what: string): AnalysisError {
  return new AnalysisError(
    `Not a scenario export: sheet ${JSON.stringify(safeText(sheet, 60))} has ${what}, far more than a scenario export holds. Check that the file is a scenario_daily_metrics export.`,
    "not_scenario_export",
  );
}

/** Only rows and cells that exist are visited: a lone cell at row 1,048,576 is one row, not a million. */
function toGrid(sheet: ExcelJS.Worksheet): Grid {
  const rows: Grid["rows"] = [];
  sheet.eachRow({ includeEmpty: false }, (row, r) => {
    if (rows.length >= MAX_SHEET_ROWS) throw tooBig(sheet.name, `more than ${MAX_SHEET_ROWS} rows`);
    const cells: CellValue[] = [];
    row.eachCell({ includeEmpty: false }, (cell, c) => {
      if (c > MAX_SHEET_COLUMNS)
        throw tooBig(sheet.name, `cells beyond column ${MAX_SHEET_COLUMNS}`);
      cells[c - 1] = cell.value;
    });
    for (let i = 0; i < cells.length; i++) if (cells[i] === undefined) cells[i] = null;
    rows.push({ r, cells });
  });
  return { name: sheet.name, rows };
}

function rowTexts(cells: CellValue[]): string[] {
  return cells.map((v) => cellText(v));
}

/** Index into grid.rows of the first row (within the first rows) that passes `test`, or -1. */
function findHeaderRow(grid: Grid, test: (texts: string[]) => boolean): number {
  for (let i = 0; i < grid.rows.length; i++) {
    const row = grid.rows[i] as Grid["rows"][number];
    if (row.r > HEADER_SCAN_ROWS) break;
    if (test(rowTexts(row.cells))) return i;
  }
  return -1;
}

interface DailySheet {
  name: string;
  number: number | null;
  titleTexts: string[];
  rows: { date: string; values: Record<string, number> }[];
}

function readDailySheet(grid: Grid, warnings: string[]): DailySheet | null {
  const headerIndex = findHeaderRow(grid, (t) => t[0] === "날짜");
  if (headerIndex < 0) return null;
  const header = rowTexts((grid.rows[headerIndex] as Grid["rows"][number]).cells);
  const titleTexts: string[] = [];
  for (let i = 0; i < headerIndex; i++) {
    titleTexts.push(
      ...rowTexts((grid.rows[i] as Grid["rows"][number]).cells).filter((t) => t !== ""),
    );
  }
  const rows: DailySheet["rows"] = [];
  for (let i = headerIndex + 1; i < grid.rows.length; i++) {
    const cells = (grid.rows[i] as Grid["rows"][number]).cells;
    const date = cellText(cells[0] ?? null);
    if (date === "") continue;
    const values: Record<string, number> = {};
    for (let c = 1; c < header.length; c++) {
      const key = header[c];
      if (key) values[key] = cellNumber(cells[c] ?? null);
    }
    rows.push({ date, values });
  }
  const m = /^#\s*(\d+)/.exec(grid.name);
  if (m === null)
    warnings.push(`Daily sheet "${safeText(grid.name, 60)}" has no #number in its name.`);
  return {
    name: grid.name,
    number: m ? Number(m[1]) : null,
    titleTexts,
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
    // Ranked, shown and tested on one measure: open users per send user (명). The 건 rates
    // follow as context only, so the text never ranks on one rate and shows another.
    const userRate = (a: (typeof arms)[number]) => ratio(a.openUsers, a.sendUsers);
    const ranked = [...arms].sort((a, b) => userRate(b) - userRate(a));
    const top = ranked[0] as (typeof arms)[number];
    const next = ranked[1] as (typeof arms)[number];
    const test =
      arms.length === 2
        ? twoProportionTest(top.openUsers, top.sendUsers, next.openUsers, next.sendUsers)
        : null;
    const tie = userRate(top) === userRate(next);
    const byUsers = arms
      .map(
        (a) =>
          `${a.branch} ${percent(userRate(a))} (${formatCount(a.openUsers)} of ${formatCount(a.sendUsers)} users)`,
      )
      .join(" vs ");
    const bySends = arms
      .map(
        (a) =>
          `${a.branch} ${percent(a.open_rate)} of ${formatCount(a.sends)} sends, ${percent(a.conversion_rate)} conversion by opens`,
      )
      .join("; ");
    const sig =
      test === null
        ? arms.length > 2
          ? " (not tested: more than two arms)"
          : " (too little data to test)"
        : test.significant
          ? ` (significant at 95%, ${formatP(test.p_value)})`
          : ` (not significant at 95%, ${formatP(test.p_value)})`;
    const verdict =
      top.sends === 0 && next.sends === 0
        ? `${where}: no sends in ${arms.map((a) => a.branch).join(" or ")} yet.`
        : `${where}: open rate by users (명) ${byUsers}; ${
            tie
              ? `${top.branch} and ${next.branch} tie${test === null ? "" : ` (${formatP(test.p_value)})`}`
              : `${top.branch} leads${sig}`
          }. Per send (건): ${bySends}.`;
    out.push({
      parent,
      arms: arms.map(({ branch, sends, open_rate, conversion_rate, sendUsers, openUsers }) => ({
        branch,
        sends,
        open_rate,
        conversion_rate,
        send_users: sendUsers,
        open_users: openUsers,
        open_rate_users: round6(ratio(openUsers, sendUsers)),
      })),
      leader: tie || (top.sends === 0 && next.sends === 0) ? null : top.branch,
      metric: "open_rate_users",
      p_value: test?.p_value ?? null,
      significant: test?.significant ?? false,
      verdict,
    });
  }
  return out;
}

/**
 * The daily sheet of each summary row (by index), or undefined. A sheet whose title area holds a
 * cell equal to the node ID is that node's; the rest go by the #number in the sheet name. A sheet
 * is never given to two nodes.
 */
function matchDailySheets(
  rows: { number: number; nodeId: string }[],
  daily: DailySheet[],
): (DailySheet | undefined)[] {
  const used = new Set<DailySheet>();
  const out: (DailySheet | undefined)[] = rows.map(() => undefined);
  rows.forEach((row, k) => {
    if (row.nodeId === "") return;
    const sheet = daily.find((d) => !used.has(d) && d.titleTexts.includes(row.nodeId));
    if (sheet) {
      used.add(sheet);
      out[k] = sheet;
    }
  });
  rows.forEach((row, k) => {
    if (out[k] !== undefined) return;
    const sheet = daily.find((d) => !used.has(d) && d.number === row.number);
    if (sheet) {
      used.add(sheet);
      out[k] = sheet;
    }
  });
  return out;
}

export async function summarizeScenarioXlsx(
  path: string,
  bytes: number,
  signal?: AbortSignal,
): Promise<ScenarioSummary> {
  const parts = await readCheckedZip(path, bytes, undefined, signal);
  // Loaded on demand: exceljs is large, and campaign summaries (the hot path) never need it.
  const { default: excel } = await import("exceljs");
  const workbook = new excel.Workbook();
  try {
    // exceljs gets only the parts the guard inflated and counted, never the file itself.
    // exceljs declares its own ArrayBuffer-like Buffer type; a Node Buffer is what it reads.
    await workbook.xlsx.load(storedZip(parts) as unknown as ArrayBuffer);
  } catch {
    throw new AnalysisError(
      "The .xlsx file could not be read as a workbook (damaged or not an Excel file). Export the scenario again.",
      "malformed_xlsx",
    );
  }
  parts.clear();
  const grids = workbook.worksheets.map(toGrid);
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

  interface SummaryRow {
    number: number;
    nodeId: string;
    channel: string;
    branch: string;
    totals: Record<string, number>;
  }
  const summaryRows: SummaryRow[] = [];
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

  const nodes: ScenarioNode[] = [];
  for (const [k, { number, nodeId, channel, branch, totals }] of summaryRows.entries()) {
    const sheet = sheetOf[k];
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
      channel,
      branch,
      node_id: nodeId,
      totals,
      days: sheet ? sheet.rows.length : 0,
      sheet: sheet ? safeText(sheet.name, 60) : null,
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
    `${formatCount(totals[SEND] ?? 0)} sends, open rate ${percent(totals["오픈율(건)"] ?? 0)}, ${formatCount(totals[CONV] ?? 0)} conversions (${percent(totals["전환율(건)"] ?? 0)} of opens)`,
    mismatched === 0
      ? "summary rows match the daily sheets"
      : `${mismatched} node(s) differ from their daily sheets`,
    ...(branches[0] ? [branches[0].verdict] : []),
  ].join("; ");
  return result;
}
