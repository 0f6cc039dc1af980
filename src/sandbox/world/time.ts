/**
 * Time helpers for the application's zone, Asia/Seoul. Korea has no daylight saving time, so a
 * fixed +09:00 offset is exact and much faster than a time-zone library on the hot path.
 */

export const TIME_ZONE = "Asia/Seoul";
export const KST_OFFSET_MS = 9 * 3_600_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

const TWO_DIGITS: readonly string[] = Array.from({ length: 60 }, (_, i) =>
  String(i).padStart(2, "0"),
);

/** Days since 1970-01-01 of the KST calendar date that contains `ms`. */
export function kstDayNumber(ms: number): number {
  return Math.floor((ms + KST_OFFSET_MS) / DAY_MS);
}

/** Epoch ms of 00:00 KST of a KST day number. */
export function kstDayStart(day: number): number {
  return day * DAY_MS - KST_OFFSET_MS;
}

/** `YYYY-MM-DD` of a KST day number. */
export function dayToDate(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

/** KST day number of a `YYYY-MM-DD` date, or undefined when it is not a real date. */
export function dateToDay(date: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) return undefined;
  const ms = Date.parse(`${date}T00:00:00Z`);
  if (Number.isNaN(ms) || dayToDate(ms / DAY_MS) !== date) return undefined;
  return ms / DAY_MS;
}

/** `YYYY-MM-DD` in KST. */
export function formatKstDate(ms: number): string {
  return dayToDate(kstDayNumber(ms));
}

let cachedDay = Number.NaN;
let cachedPrefix = "";

/**
 * `YYYY-MM-DD HH:mm:ss` in KST (the CSV's time format). Rows of one round mostly share a date,
 * so the date part is cached and only the clock part is built per call.
 */
export function formatKstDateTime(ms: number): string {
  const local = ms + KST_OFFSET_MS;
  const day = Math.floor(local / DAY_MS);
  if (day !== cachedDay) {
    cachedDay = day;
    cachedPrefix = `${dayToDate(day)} `;
  }
  const seconds = Math.floor((local - day * DAY_MS) / 1000);
  const h = TWO_DIGITS[Math.floor(seconds / 3600)] ?? "00";
  const m = TWO_DIGITS[Math.floor((seconds % 3600) / 60)] ?? "00";
  const s = TWO_DIGITS[seconds % 60] ?? "00";
  return `${cachedPrefix}${h}:${m}:${s}`;
}

/** ISO 8601 in UTC, as every date-time field of the API responses is. */
export function isoUtc(ms: number): string {
  return new Date(ms).toISOString();
}
