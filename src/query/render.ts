import { formatCount, moreNotShown, table, tableCell } from "../format.js";
import type { ExportDescription } from "./describe.js";
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
  /** Where the reader finds every returned row: the tool's structuredContent, or the CLI's --json. */
  fullRows?: string;
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

/** Columns and characters of the text table: beyond them, the structured rows hold the rest. */
const TEXT_COLUMNS = 16;
const TEXT_CHARS = 12_000;

export function renderQueryTable(result: QueryResult, options: RenderOptions): string {
  const maxCell = options.maxCellChars ?? DEFAULT_CELL_CHARS;
  const fullRows = options.fullRows ?? "structuredContent.rows";
  const columns = result.columns.slice(0, TEXT_COLUMNS);
  const grouped = columns.map((c) => !isIdColumn(c.name));
  let cut = 0;
  const lines: string[] = [];
  const shown: string[][] = [];
  let chars = 0;
  for (const row of result.rows.slice(0, options.maxRows)) {
    const cells = row.slice(0, TEXT_COLUMNS).map((value, i) => {
      const text = cellText(value, grouped[i] ?? true);
      if (text.length <= maxCell) return text;
      cut++;
      return `${text.slice(0, maxCell - 1)}…`;
    });
    const size = cells.reduce((n, c) => n + c.length + 1, 2);
    if (shown.length > 0 && chars + size > TEXT_CHARS) break;
    chars += size;
    shown.push(cells);
  }
  if (columns.length === 0) lines.push("(no columns)");
  else if (result.row_count === 0) lines.push("The query returned no rows.");
  else
    lines.push(
      table(
        columns.map((c) => tableCell(c.name)),
        shown,
      ),
    );
  const notes: string[] = [];
  if (result.row_count > shown.length) {
    const returned =
      result.rows.length > shown.length
        ? ` (${fullRows} holds ${formatCount(result.rows.length)})`
        : "";
    const why =
      result.truncated_by === "characters"
        ? "the result's character cap; select fewer or shorter columns"
        : "max_rows, or aggregate with GROUP BY";
    notes.push(
      `Showing ${formatCount(shown.length)} of ${formatCount(result.row_count)} rows${returned}; the rest were left out (${why}).`,
    );
  }
  if (result.columns.length > columns.length) {
    notes.push(
      `${result.columns.length - columns.length} more column(s) not shown in this table (they are in ${fullRows}).`,
    );
  }
  if (cut > 0) notes.push(`${cut} long cell(s) cut to ${maxCell} characters in this table.`);
  if (result.cells_cut > 0) {
    notes.push(`${result.cells_cut} cell(s) were also cut in ${fullRows} (very long text).`);
  }
  const types = result.columns.map((c) => `${c.name} ${c.type}`).join(", ");
  if (types !== "") notes.push(`Columns: ${tableCell(types)}.`);
  return [...lines, ...notes].join("\n");
}

/** The description of the chosen exports as markdown: tables, event types, keys, rounds, examples. */
export function renderDescription(d: ExportDescription): string {
  const lines: string[] = [];
  for (const t of d.tables) {
    if (t.rows === 0 && t.name !== "events") continue;
    const columns = t.columns.map((c) => `${c.name} ${c.type}`).join(", ");
    lines.push(`**${t.name}** (${formatCount(t.rows)} rows): ${tableCell(columns)}`);
  }
  if (d.event_roles.length > 0) {
    const conversion =
      d.conversion_event_type === null
        ? "conversion: every type that is none of the others, unless conversion_event_type names one"
        : `conversion: ${tableCell(d.conversion_event_type)} (conversion_event_type)`;
    lines.push(
      `**event_role** (summarize_export's rules; ${conversion}): ${d.event_roles.map((r) => `${r.event_role} ${formatCount(r.rows)}`).join(", ")}`,
    );
  }
  if (d.event_types.length > 0) {
    lines.push(
      `**Event types** (event_type event_role rows): ${d.event_types.map((e) => `${tableCell(e.event_type)} ${e.event_role} ${formatCount(e.rows)}`).join(", ")}`,
    );
  }
  if (d.json_keys.length > 0) {
    lines.push(
      `**JSON keys** (column.key rows): ${d.json_keys.map((k) => `${k.column}.${tableCell(k.key)} ${formatCount(k.rows)}`).join(", ")}`,
    );
  }
  if (d.rounds.length > 0) {
    lines.push(`**Rounds** (${formatCount(d.rounds_total)}; task_id, scheduled_at, group: sent):`);
    lines.push(
      table(
        ["task_id", "scheduled_at", "group", "sent"],
        d.rounds.map((r) => [r.task_id, r.scheduled_at, r.group ?? "NULL", formatCount(r.sent)]),
      ),
    );
    const more = moreNotShown(d.rounds_total, d.rounds.length);
    if (more !== "") lines.push(more);
  }
  lines.push("**Example queries** (each runs on this data):");
  for (const sql of d.examples) lines.push(`- \`${sql}\``);
  return lines.join("\n");
}
