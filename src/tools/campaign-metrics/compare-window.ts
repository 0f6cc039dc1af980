import type { DateTime } from "luxon";
import { KST, type MetricsWindow } from "../../api/dates.js";

/**
 * The window campaign_metrics compares with (`compare_to`). Pure: no clock, no requests.
 *
 * - previous_period: the window of the same length (to the millisecond) that ends where the
 *   asked window starts, so the two never overlap and never leave a gap.
 * - same_period_last_year: the same wall-clock dates and times one year earlier, in KST: the
 *   zone campaign_metrics reads its dates in (spec 4.4), so that "2028-02-01" to "2028-02-29"
 *   compares with the KST days 2027-02-01 to 2027-02-28 whatever CRM_TIME_ZONE says (the
 *   application's zone would move the end by its offset from KST). February 29 has no counterpart in the year before, so it is read
 *   as February 28: a start on Feb 29 moves to Feb 28 at the same time; an end is read through
 *   the last day it includes (an end at midnight closes the day before it), and an end on
 *   Feb 29 itself closes Feb 28. The window a year earlier is therefore never empty, and a
 *   one-day window stays one day (Feb 29 → Feb 28, Feb 28 → Feb 28).
 */

export const COMPARE_TO = ["previous_period", "same_period_last_year"] as const;
export type CompareTo = (typeof COMPARE_TO)[number];

/** How the text names the other window. */
export const COMPARE_LABELS: Record<CompareTo, string> = {
  previous_period: "the previous period",
  same_period_last_year: "the same period last year",
};

export function comparisonWindow(window: MetricsWindow, compareTo: CompareTo): MetricsWindow {
  return compareTo === "previous_period" ? previousPeriod(window) : samePeriodLastYear(window, KST);
}

export function previousPeriod(window: MetricsWindow): MetricsWindow {
  const length = window.to.toMillis() - window.from.toMillis();
  return { from: window.from.minus({ milliseconds: length }), to: window.from };
}

export function samePeriodLastYear(window: MetricsWindow, zone: string): MetricsWindow {
  const from = window.from.setZone(zone);
  const to = window.to.setZone(zone);
  // Luxon keeps the time of day and clamps Feb 29 to Feb 28 when the year before has none.
  const start = from.minus({ years: 1 });
  let end: DateTime;
  if (to.equals(to.startOf("day"))) {
    const lastDay = to.minus({ days: 1 });
    end = lastDay.minus({ years: 1 }).plus({ days: 1 }).startOf("day");
  } else if (isLeapDay(to)) {
    end = to.minus({ years: 1 }).plus({ days: 1 }).startOf("day");
  } else {
    end = to.minus({ years: 1 });
  }
  return { from: start, to: end };
}

function isLeapDay(dt: DateTime): boolean {
  return dt.month === 2 && dt.day === 29;
}
