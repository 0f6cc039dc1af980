import { DateTime } from "luxon";
import { DateInputError, parseDateInput } from "../api/dates.js";

/** The window `sync` looks at: `from` inclusive, `to` exclusive, in the application's zone. */
export interface SyncWindow {
  from: DateTime;
  to: DateTime;
}

/** A bad --since or --until: the flag, what it got, the forms it takes. */
export class SyncUsageError extends Error {
  override name = "SyncUsageError";
}

const DAYS = /^(\d{1,4})d$/;

/**
 * `--until` (default today) and `--since` (default 30d) read as the tools read dates: a
 * `YYYY-MM-DD` date is that whole day in the application's zone (`--until` included), an ISO
 * 8601 date-time is that instant; `--since Nd` is the N days that end where the window ends.
 */
export function resolveSyncWindow(
  since: string | undefined,
  until: string | undefined,
  now: number,
  zone: string,
): SyncWindow {
  const to =
    until === undefined
      ? DateTime.fromMillis(now, { zone }).startOf("day").plus({ days: 1 })
      : readDate(until, zone, "--until", true);
  const days = DAYS.exec(since ?? "30d");
  let from: DateTime;
  if (days !== null) {
    const count = Number(days[1]);
    if (count < 1)
      throw new SyncUsageError(
        `--since: "${since}" counts no day; give 1d or more (e.g. --since 30d).`,
      );
    from = to.minus({ days: count });
  } else {
    from = readDate(since as string, zone, "--since", false);
  }
  if (from.toMillis() >= to.toMillis()) {
    throw new SyncUsageError(
      `--since (${from.toISO()}) is not before --until (${to.toISO()}, exclusive); give an earlier --since, e.g. --since 30d.`,
    );
  }
  return { from, to };
}

function readDate(value: string, zone: string, flag: string, wholeDay: boolean): DateTime {
  try {
    const { dateTime, dateOnly } = parseDateInput(value, zone, flag);
    return dateOnly && wholeDay ? dateTime.plus({ days: 1 }) : dateTime;
  } catch (error) {
    if (!(error instanceof DateInputError)) throw error;
    const also = flag === "--since" ? ", or a number of days such as 30d" : "";
    throw new SyncUsageError(`${error.message.replace(/\.$/, "")}${also}.`);
  }
}

/** `2026-11-01..2026-11-30` when whole days, else the two instants. */
export function describeWindow(window: SyncWindow): string {
  const midnight = (t: DateTime) => t.equals(t.startOf("day"));
  if (midnight(window.from) && midnight(window.to)) {
    return `${window.from.toISODate()}..${window.to.minus({ days: 1 }).toISODate()}`;
  }
  return `${window.from.toISO({ suppressMilliseconds: true })}..${window.to.toISO({ suppressMilliseconds: true })} (end exclusive)`;
}
