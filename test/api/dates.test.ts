import { DateTime } from "luxon";
import { describe, expect, it } from "vitest";
import {
  DateInputError,
  describeWindowKst,
  formatMetricsParam,
  parseDateInput,
  resolveExportRange,
  resolveMetricsWindow,
  splitMetricsWindow,
  windowToExportDates,
} from "../../src/api/dates.js";

const DAY = 86_400_000;

describe("parseDateInput", () => {
  it("reads a date-only value as 00:00 in the given zone", () => {
    const { dateTime, dateOnly } = parseDateInput("2026-11-01", "America/New_York", "from");
    expect(dateOnly).toBe(true);
    // 2026-11-01 00:00 in New York is EDT (UTC-4) until 2 AM that day.
    expect(dateTime.toMillis()).toBe(Date.UTC(2026, 10, 1, 4, 0, 0));
  });

  it("reads an offset-less date-time in the zone and keeps explicit offsets", () => {
    expect(parseDateInput("2026-11-01T09:30", "Asia/Seoul", "x").dateTime.toMillis()).toBe(
      Date.UTC(2026, 10, 1, 0, 30),
    );
    expect(parseDateInput("2026-11-01T09:30:00Z", "Asia/Seoul", "x").dateTime.toMillis()).toBe(
      Date.UTC(2026, 10, 1, 9, 30),
    );
    expect(parseDateInput("2026-11-01 09:30-05:00", "Asia/Seoul", "x").dateTime.toMillis()).toBe(
      Date.UTC(2026, 10, 1, 14, 30),
    );
  });

  it.each(["2026-13-01", "yesterday", "2026-W45", "2026", "", "2026-02-30"])(
    "rejects %j naming the field, the value and the formats",
    (bad) => {
      const error = (() => {
        try {
          parseDateInput(bad, "Asia/Seoul", "task_from");
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(DateInputError);
      const message = (error as Error).message;
      expect(message).toContain("task_from");
      expect(message).toContain(`"${bad}"`);
      expect(message).toContain("YYYY-MM-DD");
    },
  );
});

describe("resolveExportRange (spec 4.2)", () => {
  it("sends 00:00 of each calendar date in the application's zone", () => {
    expect(resolveExportRange({ from: "2026-11-01", to: "2026-11-30" }, "Asia/Seoul")).toEqual({
      from: "2026-11-01T00:00:00.000+09:00",
      to: "2026-11-30T00:00:00.000+09:00",
      fromDate: "2026-11-01",
      toDate: "2026-11-30",
    });
  });

  it("converts date-times to the application's calendar date first", () => {
    // 20:00 UTC on Oct 31 is already Nov 1 in Seoul; 23:00 in Seoul (no offset) stays Nov 30.
    const range = resolveExportRange(
      { from: "2026-10-31T20:00:00Z", to: "2026-11-30T23:00" },
      "Asia/Seoul",
    );
    expect(range.fromDate).toBe("2026-11-01");
    expect(range.toDate).toBe("2026-11-30");
    expect(range.from).toBe("2026-11-01T00:00:00.000+09:00");
    const utc = resolveExportRange({ from: "2026-10-31T20:00:00Z" }, "UTC");
    expect(utc).toEqual({ from: "2026-10-31T00:00:00.000Z", fromDate: "2026-10-31" });
  });

  it("leaves omitted ends omitted and rejects from after to", () => {
    expect(resolveExportRange({}, "Asia/Seoul")).toEqual({});
    expect(() => resolveExportRange({ from: "2026-11-02", to: "2026-11-01" }, "UTC")).toThrow(
      DateInputError,
    );
    // Same calendar day is a valid one-day range.
    expect(resolveExportRange({ from: "2026-11-02", to: "2026-11-02" }, "UTC").toDate).toBe(
      "2026-11-02",
    );
  });
});

describe("resolveMetricsWindow (spec 4.4)", () => {
  it("makes date-only task_to cover the whole day in KST", () => {
    const w = resolveMetricsWindow("2026-11-01", "2026-11-01");
    expect(w.from.toMillis()).toBe(Date.UTC(2026, 9, 31, 15));
    expect(w.to.toMillis()).toBe(Date.UTC(2026, 10, 1, 15));
    expect(formatMetricsParam(w.from)).toBe("2026-11-01T00:00:00+09:00");
    expect(formatMetricsParam(w.to)).toBe("2026-11-02T00:00:00+09:00");
    expect(describeWindowKst(w)).toBe("2026-11-01 00:00 – 2026-11-02 00:00 KST (end exclusive)");
  });

  it("reads offset-less date-times as KST and keeps explicit offsets", () => {
    const w = resolveMetricsWindow("2026-11-01T10:00", "2026-11-02T10:00:00Z");
    expect(w.from.toMillis()).toBe(Date.UTC(2026, 10, 1, 1));
    expect(w.to.toMillis()).toBe(Date.UTC(2026, 10, 2, 10));
    expect(formatMetricsParam(w.to)).toBe("2026-11-02T19:00:00+09:00");
  });

  it("rejects an empty or reversed window", () => {
    expect(() => resolveMetricsWindow("2026-11-01T10:00", "2026-11-01T10:00")).toThrow(
      DateInputError,
    );
    expect(() => resolveMetricsWindow("2026-11-03", "2026-11-01")).toThrow(/task_from/);
  });

  it("without task_from takes the given number of days before the end", () => {
    // Date-only end: the window ends at 00:00 KST after 2026-11-30, so 30 days start 2026-11-01.
    const w = resolveMetricsWindow(undefined, "2026-11-30", 30);
    expect(w.from.toMillis()).toBe(Date.UTC(2026, 9, 31, 15));
    expect(w.to.toMillis()).toBe(Date.UTC(2026, 10, 30, 15));
    // A date-time end is exclusive as written; 7 days back from it.
    const t = resolveMetricsWindow(undefined, "2026-11-30T12:00:00Z", 7);
    expect(t.from.toMillis()).toBe(Date.UTC(2026, 10, 23, 12));
    expect(t.to.toMillis()).toBe(Date.UTC(2026, 10, 30, 12));
  });

  it("names the time zone it read an offset-less value in", () => {
    expect(() => parseDateInput("nope", "Europe/Berlin", "from")).toThrow(
      /without an offset it is read in Europe\/Berlin/,
    );
  });
});

describe("windowToExportDates (spec 4.2 from a 4.4 window)", () => {
  it("gives inclusive calendar dates in the application's zone", () => {
    const w = resolveMetricsWindow("2026-11-01", "2026-11-30");
    expect(windowToExportDates(w, "Asia/Seoul")).toEqual({ from: "2026-11-01", to: "2026-11-30" });
    // The same instants in UTC start on the previous evening: 2026-10-31 15:00Z to 2026-11-30 15:00Z.
    expect(windowToExportDates(w, "UTC")).toEqual({ from: "2026-10-31", to: "2026-11-30" });
    // An end exactly at midnight of the app zone does not pull in the next day.
    const utcMidnight = resolveMetricsWindow("2026-11-01T09:00", "2026-11-03T00:00:00Z");
    expect(windowToExportDates(utcMidnight, "UTC")).toEqual({
      from: "2026-11-01",
      to: "2026-11-02",
    });
  });
});

describe("splitMetricsWindow", () => {
  it("splits a 400-day window into 3 consecutive spans of at most 180 days", () => {
    const from = DateTime.fromISO("2026-01-01T00:00:00+09:00", { setZone: true });
    const window = { from, to: from.plus({ days: 400 }) };
    const spans = splitMetricsWindow(window);
    expect(spans).toHaveLength(3);
    expect(spans[0]?.from.toMillis()).toBe(from.toMillis());
    expect(spans.at(-1)?.to.toMillis()).toBe(from.toMillis() + 400 * DAY);
    for (let i = 0; i < spans.length; i++) {
      const span = spans[i];
      if (span === undefined) throw new Error("missing span");
      expect(span.to.toMillis() - span.from.toMillis()).toBeLessThanOrEqual(180 * DAY);
      expect(span.to.toMillis()).toBeGreaterThan(span.from.toMillis());
    }
    // Each span starts where the one before it ends.
    for (let i = 1; i < spans.length; i++) {
      expect(spans[i]?.from.toMillis()).toBe(spans[i - 1]?.to.toMillis());
    }
  });

  it("keeps a window of exactly 180 days whole and splits odd sizes", () => {
    const w = resolveMetricsWindow("2026-01-01", "2026-06-29"); // 180 days
    expect(w.to.diff(w.from, "days").days).toBe(180);
    expect(splitMetricsWindow(w)).toHaveLength(1);
    const spans = splitMetricsWindow(w, 7);
    expect(spans.length).toBe(Math.ceil(180 / 7));
    expect(spans.at(-1)?.to.toMillis()).toBe(w.to.toMillis());
  });
});
