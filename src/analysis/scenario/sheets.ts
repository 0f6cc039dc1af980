import { AnalysisError } from "../errors.js";
import { safeText } from "../safe-text.js";
import { type CellValue, readWorkbookRows, WorkbookFormatError } from "./xlsx-cells.js";

/**
 * Reading a scenario workbook's sheets (spec 2.5): cell values as text and numbers, the rows that
 * exist, header rows, the daily sheets and which node each belongs to.
 */

const HEADER_SCAN_ROWS = 30;

export type { CellValue };

export function cellText(value: CellValue): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value.trim();
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return value.toISOString().slice(0, 10);
}

export function cellNumber(value: CellValue): number {
  if (typeof value === "number") return value;
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
export interface Grid {
  name: string;
  rows: { r: number; cells: CellValue[] }[];
}

function tooBig(sheet: string, what: string): AnalysisError {
  return new AnalysisError(
    `Not a scenario export: sheet ${JSON.stringify(safeText(sheet, 60))} has ${what}, far more than a scenario export holds. Check that the file is a scenario_daily_metrics export.`,
    "not_scenario_export",
  );
}

/**
 * Every sheet's rows that hold values, from the parts zip-guard checked (see xlsx-cells.ts): a
 * lone cell at row 1,048,576 is one row, not a million; a sheet past the limits is refused.
 */
export function readGrids(parts: ReadonlyMap<string, Buffer>): Grid[] {
  try {
    return readWorkbookRows(parts, {
      maxRows: MAX_SHEET_ROWS,
      maxColumns: MAX_SHEET_COLUMNS,
      tooBig,
    });
  } catch (error) {
    if (!(error instanceof WorkbookFormatError)) throw error;
    throw new AnalysisError(
      "The .xlsx file could not be read as a workbook (damaged or not an Excel file). Export the scenario again.",
      "malformed_xlsx",
    );
  }
}

export function rowTexts(cells: CellValue[]): string[] {
  return cells.map((v) => cellText(v));
}

/** Index into grid.rows of the first row (within the first rows) that passes `test`, or -1. */
export function findHeaderRow(grid: Grid, test: (texts: string[]) => boolean): number {
  for (let i = 0; i < grid.rows.length; i++) {
    const row = grid.rows[i] as Grid["rows"][number];
    if (row.r > HEADER_SCAN_ROWS) break;
    if (test(rowTexts(row.cells))) return i;
  }
  return -1;
}

export interface DailySheet {
  name: string;
  number: number | null;
  titleTexts: string[];
  rows: { date: string; values: Record<string, number> }[];
}

export function readDailySheet(grid: Grid, warnings: string[]): DailySheet | null {
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

/**
 * The daily sheet of each summary row (by index), or undefined. A sheet whose title area holds a
 * cell equal to the node ID is that node's; the rest go by the #number in the sheet name. A sheet
 * is never given to two nodes.
 */
export function matchDailySheets(
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
