import { DateTime } from "luxon";
import { KST } from "../api/dates.js";

/**
 * The dates a prompt writes into its calls, from the server's clock (the sandbox's pinned one in
 * sandbox mode): export dates in the application's zone (spec 4.2), metrics dates in KST (spec
 * 4.4: a date-only task_from is 00:00 KST, a date-only task_to is included whole).
 */

/** Today's date in the zone. */
export function today(now: number, zone: string): string {
  return DateTime.fromMillis(now, { zone }).toISODate() as string;
}

/** `date` moved by whole days. */
export function addDays(date: string, days: number): string {
  return DateTime.fromISO(date, { zone: "utc" }).plus({ days }).toISODate() as string;
}

/** The Monday of the week before the current one, in KST (ISO weeks start on Monday). */
export function lastWeekMonday(now: number): string {
  return DateTime.fromMillis(now, { zone: KST })
    .startOf("week")
    .minus({ weeks: 1 })
    .toISODate() as string;
}

/** An epoch-ms instant as `yyyy-MM-dd HH:mm` in the zone. */
export function minuteIn(ms: number, zone: string): string {
  return DateTime.fromMillis(ms, { zone }).toFormat("yyyy-MM-dd HH:mm");
}

/** The KST date of an epoch-ms instant. */
export function kstDate(ms: number): string {
  return DateTime.fromMillis(ms, { zone: KST }).toISODate() as string;
}
