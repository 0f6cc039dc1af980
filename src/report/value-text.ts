import type { Count, ReportText } from "./i18n/index.js";
import { counted } from "./i18n/index.js";
import type { ReportPlace } from "./model.js";

/** How the report writes a p-value and its verdict, a file name, and what a chart leaves out. */

export function fileName(path: string): string {
  return path.split(/[\\/]/).pop() ?? path;
}

/** What the page was drawn from: a summary of an export file, or a campaign_metrics result. */
export type ReportSource = "summary" | "metrics";

/** "Not drawn: 22 more campaigns; ..." (see notDrawn), or nothing when all are shown. */
export function leftOut(
  t: ReportText,
  total: number,
  shown: number,
  what: (n: Count) => string,
  place: ReportPlace,
  source: ReportSource,
): string | undefined {
  return total > shown ? notDrawn(t, what(counted(t, total - shown)), place, source) : undefined;
}

/**
 * What a chart leaves out, and where to read all of it: in the view, the tool result beside it;
 * a file has nothing beside it, so it names what prints the whole list.
 */
export function notDrawn(
  t: ReportText,
  what: string,
  place: ReportPlace,
  source: ReportSource,
): string {
  const n = t.m.notes;
  const whole =
    place === "view" ? n.whereView : source === "summary" ? n.whereSummary : n.whereMetrics;
  return n.notDrawn(what, whole);
}

/** Below this a p-value is only said to be smaller. */
const SMALLEST_P = 0.001;

/** A p-value for a table cell ("0.042", "< 0.001"); none as "-". */
export function pCell(t: ReportText, p: number | null): string {
  if (p === null) return t.m.page.missing;
  return p < SMALLEST_P
    ? t.m.stats.pCell(t.f.decimal(SMALLEST_P, 3), true)
    : t.m.stats.pCell(t.f.decimal(p, 3), false);
}

/** A p-value in a sentence ("p = 0.042", "p < 0.001"); none as undefined. */
export function pText(t: ReportText, p: number | null): string | undefined {
  if (p === null) return undefined;
  return p < SMALLEST_P
    ? t.m.stats.pText(t.f.decimal(SMALLEST_P, 3), true)
    : t.m.stats.pText(t.f.decimal(p, 3), false);
}

/** The outcome of a test at 95%: significant, not, or no test for want of data. */
export function verdictLabel(t: ReportText, p: number | null, significant: boolean): string {
  const r = t.m.readout;
  if (p === null) return r.notEnoughData;
  return significant ? r.significant : r.notSignificant;
}
