import { DateTime } from "luxon";
import { MAX_METRICS_WINDOW_DAYS } from "./limits.js";

/**
 * The date rules of spec 4.2 (export ranges, read in the application's time zone) and 4.4
 * (metrics windows, read in KST whatever the application's zone). Users type dates as
 * `YYYY-MM-DD` or ISO 8601 date-times; we always send explicit offsets so the service cannot read
 * them differently from us.
 */

export const KST = "Asia/Seoul";

/** "KST" for Asia/Seoul (the service's zone), else the zone's name: how a time column is headed. */
export function zoneLabel(zone: string): string {
  return zone === KST ? "KST" : zone;
}

/** An ISO instant as `yyyy-MM-dd HH:mm` wall-clock time in `zone`. */
export function wallClockMinute(iso: string, zone: string): string {
  const t = DateTime.fromISO(iso, { zone });
  return t.isValid ? t.toFormat("yyyy-MM-dd HH:mm") : iso;
}

/** The window campaign_metrics looks at when no task_from is given. */
export const DEFAULT_METRICS_WINDOW_DAYS = 30;

const DAY_MS = 24 * 60 * 60 * 1000;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
// Luxon's fromISO also takes week and ordinal dates and bare years; users mean none of those.
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;
function acceptedFormats(zone: string): string {
  return `YYYY-MM-DD (e.g. 2026-11-01) or an ISO 8601 date-time (e.g. 2026-11-01T09:00:00+09:00; without an offset it is read in ${zone})`;
}

export class DateInputError extends Error {
  override name = "DateInputError";
  readonly field: string;
  constructor(message: string, field: string) {
    super(message);
    this.field = field;
  }
}

/**
 * Reads `YYYY-MM-DD` (00:00 of that day in `zone`) or an ISO 8601 date-time; a date-time without
 * an offset is read in `zone`, one with an offset keeps it.
 */
export function parseDateInput(
  value: string,
  zone: string,
  field: string,
): { dateTime: DateTime; dateOnly: boolean } {
  const text = value.trim();
  if (DATE_ONLY.test(text)) {
    const dateTime = DateTime.fromISO(text, { zone });
    if (dateTime.isValid) return { dateTime: dateTime.startOf("day"), dateOnly: true };
  } else {
    // A space between date and time is a common way of writing ISO 8601 by hand.
    const normalized = text.replace(/^(\d{4}-\d{2}-\d{2}) (?=\d)/, "$1T");
    if (DATE_TIME.test(normalized)) {
      const dateTime = DateTime.fromISO(normalized, { zone, setZone: true });
      if (dateTime.isValid) return { dateTime, dateOnly: false };
    }
  }
  throw new DateInputError(
    `${field}: "${shorten(value)}" is not a valid date. Use ${acceptedFormats(zone)}.`,
    field,
  );
}

export interface ExportRange {
  /** What we send: 00:00 of `fromDate` in the application's zone, ISO with offset. */
  from?: string;
  to?: string;
  /** The calendar dates (application zone) the service will include, `YYYY-MM-DD`. */
  fromDate?: string;
  toDate?: string;
}

/**
 * Spec 4.2: both ends are calendar dates in the application's zone; `to` is included whole.
 * We send each date's local midnight with its offset: the service converts to the application's
 * zone and lands on the same date, provided CRM_TIME_ZONE is that zone. If it is not, a zone
 * west of ours would read the previous date. Local noon would survive such a mismatch, but
 * spec 4.2 describes the values as "from 00:00 of that date", and a service that used the
 * instant as given rather than its date would then drop the morning: midnight is the faithful
 * choice, and CRM_TIME_ZONE must match the application's setting.
 */
export function resolveExportRange(
  input: { from?: string | undefined; to?: string | undefined },
  zone: string,
): ExportRange {
  const range: ExportRange = {};
  if (input.from !== undefined) {
    const date = toZoneDate(input.from, zone, "from");
    range.fromDate = date;
    range.from = startOfDateIso(date, zone);
  }
  if (input.to !== undefined) {
    const date = toZoneDate(input.to, zone, "to");
    range.toDate = date;
    range.to = startOfDateIso(date, zone);
  }
  if (range.fromDate !== undefined && range.toDate !== undefined && range.fromDate > range.toDate) {
    throw new DateInputError(
      `from (${range.fromDate}) is after to (${range.toDate}) in ${zone}; give from <= to, for example from=2026-11-01 to=2026-11-30.`,
      "from",
    );
  }
  return range;
}

function toZoneDate(value: string, zone: string, field: string): string {
  const { dateTime } = parseDateInput(value, zone, field);
  // A valid DateTime always formats to a date.
  return dateTime.setZone(zone).toISODate() as string;
}

function startOfDateIso(date: string, zone: string): string {
  return DateTime.fromISO(date, { zone }).startOf("day").toISO() as string;
}

/** A metrics window: `from` inclusive, `to` exclusive. */
export interface MetricsWindow {
  from: DateTime;
  to: DateTime;
}

/**
 * Spec 4.4: offset-less date-times are KST (whatever the application's zone); a date-only
 * `task_from` is 00:00 KST of that day and a date-only `task_to` is 00:00 KST of the next day, so
 * the date written in `task_to` is included whole. Without `task_from` the window is the
 * `defaultDays` days before that end.
 */
export function resolveMetricsWindow(
  taskFrom: string | undefined,
  taskTo: string,
  defaultDays: number = DEFAULT_METRICS_WINDOW_DAYS,
): MetricsWindow {
  const parsedTo = parseDateInput(taskTo, KST, "task_to");
  const to = parsedTo.dateOnly ? parsedTo.dateTime.plus({ days: 1 }) : parsedTo.dateTime;
  const from =
    taskFrom === undefined
      ? to.minus({ days: defaultDays })
      : parseDateInput(taskFrom, KST, "task_from").dateTime;
  if (from.toMillis() >= to.toMillis()) {
    throw new DateInputError(
      `task_from (${formatMetricsParam(from)}) must be before task_to (${formatMetricsParam(to)}, exclusive); for example task_from=2026-11-01 task_to=2026-11-30.`,
      "task_from",
    );
  }
  return { from, to };
}

/**
 * The export of the same period as a metrics window: spec 4.2 takes calendar dates in the
 * application's zone, `to` included, so the exclusive window end becomes the day before.
 */
export function windowToExportDates(
  window: MetricsWindow,
  zone: string,
): { from: string; to: string } {
  return {
    from: window.from.setZone(zone).toISODate() as string,
    to: window.to.minus({ milliseconds: 1 }).setZone(zone).toISODate() as string,
  };
}

/** Consecutive spans of at most `maxDays` days covering `window` with no gap and no overlap. */
export function splitMetricsWindow(
  window: MetricsWindow,
  maxDays: number = MAX_METRICS_WINDOW_DAYS,
): MetricsWindow[] {
  if (!(maxDays > 0)) throw new RangeError("maxDays must be greater than 0");
  const spanMs = maxDays * DAY_MS;
  const end = window.to.toMillis();
  const spans: MetricsWindow[] = [];
  let cursor = window.from;
  while (cursor.toMillis() < end) {
    const next =
      cursor.toMillis() + spanMs >= end ? window.to : cursor.plus({ milliseconds: spanMs });
    spans.push({ from: cursor, to: next });
    cursor = next;
  }
  return spans;
}

/** What we send as task_from/task_to: ISO 8601 in KST with its +09:00 offset. */
export function formatMetricsParam(dt: DateTime): string {
  return dt.setZone(KST).toISO({ suppressMilliseconds: true }) as string;
}

/** `2026-11-01 00:00 – 2026-12-01 00:00 KST (end exclusive)`, for tool output. */
export function describeWindowKst(window: MetricsWindow): string {
  const fmt = (dt: DateTime) => dt.setZone(KST).toFormat("yyyy-MM-dd HH:mm");
  return `${fmt(window.from)} – ${fmt(window.to)} KST (end exclusive)`;
}

/** The same window in UTC ISO strings, for structured output. */
export function windowToUtc(window: MetricsWindow): { from: string; to: string } {
  return {
    from: window.from.toUTC().toISO() as string,
    to: window.to.toUTC().toISO() as string,
  };
}

function shorten(value: string): string {
  return value.length > 60 ? `${value.slice(0, 57)}...` : value;
}
