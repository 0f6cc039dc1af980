/**
 * Time helpers for the application's zone, Asia/Seoul. Korea has no daylight saving time, so a
 * fixed +09:00 offset is exact and much faster than a time-zone library on the hot path.
 */

/** KST: the zone spec 4.4 reads metrics dates in, whatever the application's zone. */
export const KST = "Asia/Seoul";
/** The generated application's zone (spec 4.2 export dates, CSV times); tests may give a world another. */
export const TIME_ZONE = KST;
/** KST's fixed offset (no DST in Korea since 1988), for the world's day arithmetic. */
export const KST_OFFSET_MS = 9 * 3_600_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

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

/** ISO 8601 in UTC, as every date-time field of the API responses is. */
export function isoUtc(ms: number): string {
  return new Date(ms).toISOString();
}
