/** Compact text for a model's context: small tables, capped lists that say what was left out. */

/** A markdown table; cells lose pipes and line breaks so one row stays one line. */
export function table(headers: string[], rows: Array<Array<string | number>>): string {
  const cell = (v: string | number) => String(v).replace(/[|\r\n]+/g, " ");
  const lines = [`|${headers.join("|")}|`, `|${headers.map(() => "-").join("|")}|`];
  for (const row of rows) lines.push(`|${row.map(cell).join("|")}|`);
  return lines.join("\n");
}

/** `12 more not shown (hint).`, or "" when nothing was left out; callers place it. */
export function moreNotShown(total: number, shown: number, hint?: string): string {
  if (total <= shown) return "";
  return `${total - shown} more not shown${hint === undefined ? "" : ` (${hint})`}.`;
}

export function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export function formatNumber(value: number): string {
  return Number.isInteger(value) ? value.toLocaleString("en-US") : value.toFixed(2);
}

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

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** The call the model should make next, in the form tool descriptions use. */
export function callHint(tool: string, args: Record<string, unknown>): string {
  return `${tool} ${JSON.stringify(args)}`;
}

/** Ratios to 4 decimals: enough for 0.01% and far fewer tokens than 17 digits. */
export function roundRatio(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}
