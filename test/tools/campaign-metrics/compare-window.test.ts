import { describe, expect, it } from "vitest";
import {
  formatMetricsParam,
  type MetricsWindow,
  resolveMetricsWindow,
  splitMetricsWindow,
} from "../../../src/api/dates.js";
import {
  comparisonWindow,
  previousPeriod,
  samePeriodLastYear,
} from "../../../src/tools/campaign-metrics/compare-window.js";

/** A window as the tool reads it: date-only ends are whole KST days, task_to included. */
const days = (from: string, to: string): MetricsWindow => resolveMetricsWindow(from, to);
const shown = (w: MetricsWindow) => [formatMetricsParam(w.from), formatMetricsParam(w.to)];

describe("previous_period", () => {
  it("of a 7-day window is the 7 days before it", () => {
    expect(shown(previousPeriod(days("2026-11-08", "2026-11-14")))).toEqual([
      "2026-11-01T00:00:00+09:00",
      "2026-11-08T00:00:00+09:00",
    ]);
  });

  it("of a 1-day window is the day before", () => {
    expect(shown(previousPeriod(days("2026-11-08", "2026-11-08")))).toEqual([
      "2026-11-07T00:00:00+09:00",
      "2026-11-08T00:00:00+09:00",
    ]);
  });

  it("crosses a month end by length, not by calendar month", () => {
    // November 1 to 3: the three days before are October 29 to 31.
    expect(shown(previousPeriod(days("2026-11-01", "2026-11-03")))).toEqual([
      "2026-10-29T00:00:00+09:00",
      "2026-11-01T00:00:00+09:00",
    ]);
    // All of November (30 days): the 30 days before, October 2 to 31, not all of October.
    expect(shown(previousPeriod(days("2026-11-01", "2026-11-30")))).toEqual([
      "2026-10-02T00:00:00+09:00",
      "2026-11-01T00:00:00+09:00",
    ]);
    // A date-time window keeps its time of day: over the end of a 28-day February.
    const hours = resolveMetricsWindow("2027-03-01T09:00:00+09:00", "2027-03-02T09:00:00+09:00");
    expect(shown(previousPeriod(hours))).toEqual([
      "2027-02-28T09:00:00+09:00",
      "2027-03-01T09:00:00+09:00",
    ]);
  });

  it("of a window over 180 days is as long and is split like it, with no gap", () => {
    const window = days("2026-01-01", "2026-07-31"); // 212 days
    const previous = previousPeriod(window);
    expect(shown(previous)).toEqual(["2025-06-03T00:00:00+09:00", "2026-01-01T00:00:00+09:00"]);
    expect(previous.to.diff(previous.from, "days").days).toBe(212);
    const spans = splitMetricsWindow(previous);
    expect(spans.map(shown)).toEqual([
      ["2025-06-03T00:00:00+09:00", "2025-11-30T00:00:00+09:00"],
      ["2025-11-30T00:00:00+09:00", "2026-01-01T00:00:00+09:00"],
    ]);
  });
});

describe("same_period_last_year", () => {
  it("is the same KST dates a year earlier", () => {
    expect(
      shown(comparisonWindow(days("2026-11-01", "2026-11-21"), "same_period_last_year")),
    ).toEqual(["2025-11-01T00:00:00+09:00", "2025-11-22T00:00:00+09:00"]);
    const hours = resolveMetricsWindow("2026-11-01T09:30:00+09:00", "2026-11-02T18:00:00+09:00");
    expect(shown(comparisonWindow(hours, "same_period_last_year"))).toEqual([
      "2025-11-01T09:30:00+09:00",
      "2025-11-02T18:00:00+09:00",
    ]);
  });

  it("reads Feb 29 as Feb 28: one day stays one day and never becomes empty", () => {
    const lastYear = (from: string, to: string) =>
      shown(comparisonWindow(days(from, to), "same_period_last_year"));
    // Feb 29 alone, Feb 28 alone, and both: each is Feb 28 of the year before.
    expect(lastYear("2028-02-29", "2028-02-29")).toEqual([
      "2027-02-28T00:00:00+09:00",
      "2027-03-01T00:00:00+09:00",
    ]);
    expect(lastYear("2028-02-28", "2028-02-28")).toEqual([
      "2027-02-28T00:00:00+09:00",
      "2027-03-01T00:00:00+09:00",
    ]);
    expect(lastYear("2028-02-28", "2028-02-29")).toEqual([
      "2027-02-28T00:00:00+09:00",
      "2027-03-01T00:00:00+09:00",
    ]);
    // All of February 2028 (29 days) is all of February 2027 (28 days).
    expect(lastYear("2028-02-01", "2028-02-29")).toEqual([
      "2027-02-01T00:00:00+09:00",
      "2027-03-01T00:00:00+09:00",
    ]);
    // From a Feb 29 to March: Feb 28 to the same March day.
    expect(lastYear("2028-02-29", "2028-03-06")).toEqual([
      "2027-02-28T00:00:00+09:00",
      "2027-03-07T00:00:00+09:00",
    ]);
    // The other way: Feb 28 of a common year is Feb 28 of the leap year before, without Feb 29.
    expect(lastYear("2029-02-28", "2029-02-28")).toEqual([
      "2028-02-28T00:00:00+09:00",
      "2028-02-29T00:00:00+09:00",
    ]);
  });

  it("moves a date-time on Feb 29 to Feb 28, and an end on it to the end of Feb 28", () => {
    const window = resolveMetricsWindow("2028-02-29T10:00:00+09:00", "2028-02-29T14:00:00+09:00");
    expect(shown(samePeriodLastYear(window, "Asia/Seoul"))).toEqual([
      "2027-02-28T10:00:00+09:00",
      "2027-03-01T00:00:00+09:00",
    ]);
    // A start on Feb 28 evening and an end on Feb 29 morning do not cross over.
    const night = resolveMetricsWindow("2028-02-28T20:00:00+09:00", "2028-02-29T06:00:00+09:00");
    expect(shown(samePeriodLastYear(night, "Asia/Seoul"))).toEqual([
      "2027-02-28T20:00:00+09:00",
      "2027-03-01T00:00:00+09:00",
    ]);
  });

  it("takes its calendar in the zone it is given (KST days are not UTC days)", () => {
    // 2028-03-01 00:00 KST is 2028-02-29 15:00 UTC: a UTC calendar sees a leap-day end.
    const window = days("2028-02-01", "2028-02-29");
    expect(shown(samePeriodLastYear(window, "UTC"))[1]).toBe("2027-03-01T09:00:00+09:00");
    expect(shown(samePeriodLastYear(window, "Asia/Seoul"))[1]).toBe("2027-03-01T00:00:00+09:00");
  });
});
