import { formatCount, formatNumber, percent } from "../format.js";
import type { ReportPlace, ValueFormat } from "./model.js";

/** How the report writes a value, a p-value, a file name, and what a chart or table leaves out. */

/** The value as shown in text and tables ("12.3%", "1,234", "4.2 min"); null as "-". */
export function formatValue(value: number | null | undefined, format: ValueFormat): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return "-";
  switch (format) {
    case "count":
      return formatCount(Math.round(value));
    case "number":
      return formatNumber(value);
    case "percent":
      return percent(value);
    case "seconds":
      return formatSeconds(value);
  }
}

export function formatSeconds(seconds: number): string {
  if (seconds < 90) return `${formatNumber(Math.round(seconds))} s`;
  if (seconds < 5400) return `${(seconds / 60).toFixed(1)} min`;
  if (seconds < 172_800) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86_400).toFixed(1)} d`;
}

export function signed(value: number | null, format: ValueFormat): string {
  if (value === null) return "-";
  const text = formatValue(Math.abs(value), format);
  return value < 0 ? `−${text}` : value > 0 ? `+${text}` : text;
}

export function fileName(path: string): string {
  return path.split(/[\\/]/).pop() ?? path;
}

/** "Not drawn: 22 more campaigns; ..." (see notDrawn), or nothing when all are shown. */
export function leftOut(
  total: number,
  shown: number,
  what: string,
  place: ReportPlace,
  source: ReportSource,
): string | undefined {
  return total > shown
    ? notDrawn(`${formatCount(total - shown)} more ${what}`, place, source)
    : undefined;
}

/** What the page was drawn from: a summary of an export file, or a campaign_metrics result. */
export type ReportSource = "summary" | "metrics";

/**
 * What a chart leaves out, and where to read all of it: in the view, the tool result beside it;
 * a file has nothing beside it, so it names what prints the whole list.
 */
export function notDrawn(what: string, place: ReportPlace, source: ReportSource): string {
  const whole =
    place === "view"
      ? "the tool result has them all"
      : source === "summary"
        ? "`crm-insights-mcp summarize --json` on the export prints them all"
        : "a campaign_metrics call for the same window returns them all";
  return `Not drawn: ${what}; ${whole}.`;
}

export function formatP(p: number | null): string {
  if (p === null) return "-";
  return p < 0.001 ? "< 0.001" : p.toFixed(3);
}
