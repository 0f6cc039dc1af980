import {
  type AnswerColumn,
  type ColumnKind,
  cellNumber,
  columnKinds,
  isIntegerType,
} from "./chart-choice.js";
import type { ReportText } from "./i18n/index.js";
import type { ValueFormat } from "./model.js";

/**
 * How the page writes each cell of a query answer, in its locale: measures grouped (counts whole,
 * rates as percentages), dates and times as local dates, keys (IDs, codes, hours) as they are.
 */

/** How a column's values are written: a number format, a local time, or the text as it is. */
export type CellFormat = ValueFormat | "time" | "raw";

export interface ColumnFormat {
  kind: ColumnKind;
  format: CellFormat;
}

/** Names of a share between 0 and 1 (open_rate, ctr_ratio, share, pct), and 율 (오픈율). */
const RATE_NAME = /(rate|ratio|share|pct|percent|율)/i;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

export function columnFormats(
  columns: readonly AnswerColumn[],
  rows: readonly (readonly unknown[])[],
): ColumnFormat[] {
  const kinds = columnKinds(columns, rows);
  return columns.map((column, i) => {
    const kind = kinds[i] as ColumnKind;
    if (kind === "time") return { kind, format: "time" };
    if (kind !== "number") return { kind, format: "raw" };
    const values = rows.map((r) => cellNumber(r[i])).filter((v): v is number => v !== null);
    const share =
      RATE_NAME.test(column.name) && values.length > 0 && values.every((v) => v >= 0 && v <= 1);
    if (share) return { kind, format: "percent" };
    return { kind, format: isIntegerType(column.type) ? "count" : "number" };
  });
}

/** One cell in the page's words and figures; NULL as the page's mark for a missing value. */
export function cellText(value: unknown, format: CellFormat, t: ReportText): string {
  if (value === null || value === undefined) return t.m.page.missing;
  if (format === "time") return typeof value === "string" ? t.f.localTime(value) : String(value);
  if (format !== "raw") {
    const n = cellNumber(value);
    return n === null ? String(value) : t.f.value(n, format);
  }
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

/**
 * A value along a chart's axis or in its legend: a date alone is left as ISO text, which the
 * page writes short on an axis and in full in a table; NULL as the page's "(none)".
 */
export function labelText(value: unknown, format: CellFormat, t: ReportText): string {
  if (value === null || value === undefined) return t.m.page.none;
  if (format === "time" && typeof value === "string" && DATE_ONLY.test(value)) return value;
  return cellText(value, format, t);
}

/** The format of a chart's values: its columns' common one, else plain numbers. */
export function valueFormat(formats: readonly CellFormat[]): ValueFormat {
  const [first] = formats;
  if (first === "percent" || first === "count" || first === "seconds") {
    if (formats.every((f) => f === first)) return first;
  }
  return "number";
}
