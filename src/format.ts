/**
 * Compact text for a model's context, shared by the tools and the export analysis: numbers,
 * percentages, small markdown tables, capped lists that say what was left out.
 */

/**
 * Text from outside (API names, file content) made unable to add markup that changes the
 * output's structure, with as few backslashes as possible: a model reads this text and copies
 * names, IDs and quoted messages from it, and every backslash it sees may end up in an answer or
 * a later argument. So `#{고객명}`, `[대용량]` or `cmp_1a2b` stay exactly as written; only a
 * character that could start a block at a line's start (heading, quote, list, rule, fence,
 * table row) is escaped there, and links and HTML tags are defused anywhere.
 */
export function markdownText(text: string): string {
  return defuseInline(text)
    .replace(/^([ \t]*)([#>|\-+*=_~`])/gm, "$1\\$2")
    .replace(/^([ \t]*\d{1,9})([.)])(?=\s|$)/gm, "$1\\$2");
}

/** `[x](url)` links and `<tag>` HTML render even mid-line; their opening is escaped. */
function defuseInline(text: string): string {
  return text.replace(/\]\(/g, "]\\(").replace(/<(?=[A-Za-z/!?])/g, "\\<");
}

/**
 * One table cell: a line break would end the row and a `|` would add a cell, so line breaks
 * become spaces and pipes are escaped (with a backslash that would escape the pipe or the
 * closing separator itself doubled). Nothing can start a block inside a row, so the rest stays
 * as written (links and tags defused).
 */
export function tableCell(text: string): string {
  return defuseInline(
    text
      .replace(/[\r\n]+/g, " ")
      .replace(/\\(?=\||$)/g, "\\\\")
      .replace(/\|/g, "\\|"),
  );
}

/**
 * A markdown table. Cells are text from outside (API names, file content): see tableCell, so
 * one row stays one line with its cells. Headers are ours and written as given. `padded`:
 * `| a | b |` rows and `---` rules (the analysis' longer tables) instead of the compact `|a|b|`.
 */
export function table(
  headers: string[],
  rows: Array<Array<string | number>>,
  options: { padded?: boolean } = {},
): string {
  const cell = (v: string | number) => tableCell(String(v));
  const line = (cells: string[]) =>
    options.padded ? `| ${cells.join(" | ")} |` : `|${cells.join("|")}|`;
  const rule = `|${headers.map(() => (options.padded ? "---" : "-")).join("|")}|`;
  return [line(headers), rule, ...rows.map((row) => line(row.map(cell)))].join("\n");
}

/** `12 more not shown (hint).`, or "" when nothing was left out; callers place it. */
export function moreNotShown(total: number, shown: number, hint?: string): string {
  if (total <= shown) return "";
  return `${total - shown} more not shown${hint === undefined ? "" : ` (${hint})`}.`;
}

export function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * Digits grouped the en-US way (1,234,567). Whole numbers are grouped here: the first
 * toLocaleString of a process loads the locale data, about 20 ms at the end of every summary.
 */
export function formatCount(value: number): string {
  if (!Number.isSafeInteger(value) || Object.is(value, -0)) return value.toLocaleString("en-US");
  const digits = String(Math.abs(value));
  let out = digits.slice(0, ((digits.length - 1) % 3) + 1);
  for (let at = out.length; at < digits.length; at += 3) out += `,${digits.slice(at, at + 3)}`;
  return value < 0 ? `-${out}` : out;
}

/** Whole numbers grouped, others to 2 decimals. */
export function formatNumber(value: number): string {
  return Number.isInteger(value) ? formatCount(value) : value.toFixed(2);
}

/** A ratio as a percentage to one decimal (0.1234 as 12.3%); null as "-". */
export function percent(ratio: number | null): string {
  return ratio === null ? "-" : `${(ratio * 100).toFixed(1)}%`;
}

/** `{"KRW": 1200000, "USD": 30}` as `1,200,000 KRW + 30 USD`. */
export function money(amounts: Record<string, number>): string {
  const parts = Object.entries(amounts)
    .filter(([, v]) => v !== 0)
    .map(([currency, v]) => `${formatNumber(v)} ${currency}`);
  return parts.length === 0 ? "0" : parts.join(" + ");
}

/** Sizes the way every text writes them: "512 B", "12.3 KB", "700.0 MB" (binary units). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${mebibytes(bytes)} MB`;
}

/**
 * A download's progress, always in MB so that successive messages compare: "12.3 of 700.0 MB",
 * or "12.3 MB so far" when the size is not known.
 */
export function formatByteProgress(bytes: number, total: number | undefined): string {
  return total === undefined
    ? `${mebibytes(bytes)} MB so far`
    : `${mebibytes(bytes)} of ${mebibytes(total)} MB`;
}

const mebibytes = (n: number): string => (n / 1024 / 1024).toFixed(1);

/** The call the model should make next, in the form tool descriptions use. */
export function callHint(tool: string, args: Record<string, unknown>): string {
  return `${tool} ${JSON.stringify(args)}`;
}

/** A follow-up call as data (`next_calls`), beside its text form in `next_step`. */
export interface NextCall {
  tool: string;
  arguments: Record<string, unknown>;
}

export function nextCall(tool: string, args: Record<string, unknown>): NextCall {
  return { tool, arguments: args };
}

/** The text form of a list of calls, for next_step: "a {...} then b {...}". */
export function describeCalls(calls: readonly NextCall[]): string {
  return calls.map((c) => callHint(c.tool, c.arguments)).join(" then ");
}

/** Ratios to 4 decimals: enough for 0.01% and far fewer tokens than 17 digits. */
export function roundRatio(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}
