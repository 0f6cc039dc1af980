import { formatCount, formatNumber, percent } from "../format.js";
import type { ValueFormat } from "./model.js";

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

export function leftOut(total: number, shown: number, what: string): string | undefined {
  return total > shown
    ? `${formatCount(total - shown)} more ${what} in structuredContent.`
    : undefined;
}

export function formatP(p: number | null): string {
  if (p === null) return "-";
  return p < 0.001 ? "< 0.001" : p.toFixed(3);
}
