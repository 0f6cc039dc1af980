import { DateTime } from "luxon";
import {
  describeWindowKst,
  formatMetricsParam,
  KST,
  type MetricsWindow,
  resolveMetricsWindow,
} from "../../api/dates.js";
import { MAX_METRICS_WINDOW_DAYS } from "../../api/limits.js";
import { callHint } from "../../format.js";
import { ToolInputError } from "../../mcp/tool-errors.js";
import { blankToUndefined } from "../../text-input.js";
import { DEFAULT_DAYS, MAX_CALL_WINDOW_DAYS } from "./schemas.js";

/** campaign_metrics' time window: read from the arguments, bounded, and named in the text. */

/**
 * The window in the words the export tools use for dates ("2026-11-01 to 2026-11-07
 * (inclusive, KST)") when it is whole days, else its exact KST times.
 */
export function describePeriod(window: MetricsWindow): string {
  const from = window.from.setZone(KST);
  const to = window.to.setZone(KST);
  const midnight = (dt: DateTime) => dt.equals(dt.startOf("day"));
  if (!midnight(from) || !midnight(to)) return describeWindowKst(window);
  const last = to.minus({ days: 1 });
  return `${from.toISODate()} to ${last.toISODate()} (inclusive, KST)`;
}

/**
 * The window as short as the text can name it: `2026-10-01..2026-10-31` (both days included)
 * when it is whole KST days, one date for one day, else its exact KST times.
 */
export function shortPeriod(window: MetricsWindow): string {
  const from = window.from.setZone(KST);
  const to = window.to.setZone(KST);
  const midnight = (dt: DateTime) => dt.equals(dt.startOf("day"));
  if (!midnight(from) || !midnight(to)) {
    return `${from.toFormat("yyyy-MM-dd HH:mm")}..${to.toFormat("yyyy-MM-dd HH:mm")} KST (end exclusive)`;
  }
  const first = from.toISODate() as string;
  const last = to.minus({ days: 1 }).toISODate() as string;
  return first === last ? first : `${first}..${last}`;
}

/** The window asked for: task_to defaults to today (KST), task_from to DEFAULT_DAYS before it. */
export function resolveWindow(
  from: string | undefined,
  to: string | undefined,
  now: number,
): MetricsWindow {
  const today = DateTime.fromMillis(now, { zone: KST }).toISODate() as string;
  return resolveMetricsWindow(blankToUndefined(from), blankToUndefined(to) ?? today, DEFAULT_DAYS);
}

/** Refuses a window longer than one call covers, before any request, saying what to do. */
export function checkWindowLength(window: MetricsWindow, now: number): void {
  const days = window.to.diff(window.from, "days").days;
  if (!(days > MAX_CALL_WINDOW_DAYS)) return;
  // The suggestion ends at the window's end, or tomorrow's start when that is later than today.
  const tomorrow = DateTime.fromMillis(now, { zone: KST }).startOf("day").plus({ days: 1 });
  const end = DateTime.min(window.to, tomorrow);
  const to = formatMetricsParam(end);
  const from = formatMetricsParam(end.minus({ days: MAX_CALL_WINDOW_DAYS }));
  throw new ToolInputError(
    "task_from",
    `the window from task_from to task_to is ${Math.round(days).toLocaleString("en-US")} days; one campaign_metrics call covers at most ${MAX_CALL_WINDOW_DAYS.toLocaleString("en-US")} days (about 3 years, ${Math.ceil(MAX_CALL_WINDOW_DAYS / MAX_METRICS_WINDOW_DAYS)} requests of the service's ${MAX_METRICS_WINDOW_DAYS}-day limit). Narrow it, e.g. ${callHint("campaign_metrics", { task_from: from, task_to: to })}, or make one call per period.`,
  );
}
