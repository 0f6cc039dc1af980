import { formatCount, table, tableCell } from "../format.js";
import type { QueryResult } from "./run.js";
import type { JsonValue } from "./values.js";

/**
 * A query result as a compact markdown table for a model: numbers grouped and rounded, long
 * cells cut (and counted), and a last line that says which rows and columns were left out.
 */
export interface RenderOptions {
  /** Rows shown in the text (the structured result may hold more). */
  maxRows: number;
  /** Longest cell shown whole. */
  maxCellChars?: number;
}

const DEFAULT_CELL_CHARS = 80;

/** IDs, numbers and years read wrong when grouped (task 1,024). */
function isIdColumn(name: string): boolean {
  return /(^|_)(id|number|year|code)$|^#$/i.test(name);
}

function numberText(value: number, grouped: boolean): string {
  if (!grouped) return String(value);
  if (Number.isInteger(value)) return formatCount(value);
  return Math.abs(value) >= 1
    ? value.toLocaleString("en-US", { maximumFractionDigits: 2 })
    : value.toLocaleString("en-US", { maximumSignificantDigits: 3 });
}

function cellText(value: JsonValue, grouped: boolean): string {
  if (value === null) return "NULL";
  if (typeof value === "number") return numberText(value, grouped);
  if (typeof value === "string") return value;
  return JSON.stringify(value);
}

export function renderQueryTable(result: QueryResult, options: RenderOptions): string {
  const maxCell = options.maxCellChars ?? DEFAULT_CELL_CHARS;
  const shown = result.rows.slice(0, options.maxRows);
  let cut = 0;
  const grouped = result.columns.map((c) => !isIdColumn(c.name));
  const rows = shown.map((row) =>
    row.map((value, i) => {
      const text = cellText(value, grouped[i] ?? true);
      if (text.length <= maxCell) return text;
      cut++;
      return `${text.slice(0, maxCell - 1)}…`;
    }),
  );
  const lines: string[] = [];
  if (result.columns.length === 0) lines.push("(no columns)");
  else if (result.row_count === 0) lines.push("The query returned no rows.");
  else {
    lines.push(
      table(
        result.columns.map((c) => tableCell(c.name)),
        rows,
      ),
    );
  }
  const notes: string[] = [];
  if (result.row_count > shown.length) {
    const returned =
      result.rows.length > shown.length
        ? ` (structuredContent.rows holds ${formatCount(result.rows.length)})`
        : "";
    const why =
      result.truncated_by === "characters"
        ? "the result's character cap"
        : "max_rows, or aggregate with GROUP BY";
    notes.push(
      `Showing ${formatCount(shown.length)} of ${formatCount(result.row_count)} rows${returned}; the rest were left out (${why}).`,
    );
  }
  if (cut > 0) notes.push(`${cut} long cell(s) cut to ${maxCell} characters in this table.`);
  if (result.cells_cut > 0) {
    notes.push(
      `${result.cells_cut} cell(s) were also cut in the structured rows (very long text).`,
    );
  }
  const types = result.columns.map((c) => `${c.name} ${c.type}`).join(", ");
  if (types !== "") notes.push(`Columns: ${tableCell(types)}.`);
  return [...lines, ...notes].join("\n");
}
