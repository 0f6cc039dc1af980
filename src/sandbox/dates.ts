import { DateTime } from "luxon";

/**
 * Date rules of spec 4.2 and 4.4, each read in the zone its caller passes: the application's zone
 * for export ranges (4.2), KST for metrics windows (4.4 rule 3, whatever the application's zone).
 * Accepted inputs are `YYYY-MM-DD` and ISO 8601 date-times
 * `YYYY-MM-DDTHH:mm[:ss[.fff]][Z|±HH:MM]`; an offset-less date-time is read in that zone, an
 * explicit offset is honoured.
 */

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/;

export interface ParsedMoment {
  dateOnly: boolean;
  /** The moment in the application's zone (00:00 of the day for a date-only value). */
  at: DateTime;
}

/** Parses one request value, or returns undefined when it is not an accepted ISO 8601 form. */
export function parseMoment(value: string, timeZone: string): ParsedMoment | undefined {
  const dateOnly = DATE_ONLY.test(value);
  if (!dateOnly && !DATE_TIME.test(value)) return undefined;
  const at = DateTime.fromISO(value, { zone: timeZone });
  if (!at.isValid) return undefined;
  return { dateOnly, at };
}

/** `YYYY-MM-DD` of a moment in the application's zone. */
export function appDate(moment: ParsedMoment): string {
  return moment.at.toISODate() ?? "";
}

/**
 * Spec 4.2 rule 2: from 00:00 of the `from` date (after conversion to the app zone) to 00:00 of
 * the day after the `to` date; either side may be open.
 */
export function exportRange(
  from: ParsedMoment | undefined,
  to: ParsedMoment | undefined,
): { fromMs: number; toMs: number } {
  return {
    fromMs: from === undefined ? Number.NEGATIVE_INFINITY : from.at.startOf("day").toMillis(),
    toMs:
      to === undefined
        ? Number.POSITIVE_INFINITY
        : to.at.startOf("day").plus({ days: 1 }).toMillis(),
  };
}

/**
 * Spec 4.4 rules 3 and 4: a date-only `task_from` is 00:00 of that day, a date-only `task_to` is
 * 00:00 of the next day; date-times are taken as they are.
 */
export function metricsWindow(
  from: ParsedMoment,
  to: ParsedMoment,
): { fromMs: number; toMs: number } {
  return {
    fromMs: from.at.toMillis(),
    toMs: to.dateOnly ? to.at.plus({ days: 1 }).toMillis() : to.at.toMillis(),
  };
}
