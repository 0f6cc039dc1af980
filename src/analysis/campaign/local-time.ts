export const NO_TIME = -2147483648;

/**
 * Seconds since 2000-01-01 of a `YYYY-MM-DD HH:mm:ss` local time text, read straight from the
 * bytes; NO_TIME when the text has another shape. Both ends of a receipt-to-open interval are in
 * the same local zone, so their difference is exact except across a DST change (Asia/Seoul has
 * none).
 */
export function localSeconds(buf: Buffer, s: number, e: number): number {
  if (e - s < 19) return NO_TIME;
  // Two-digit groups read in place (no closure, nothing built per call); -1 marks a non-digit.
  const century = pair(buf, s);
  const yy = pair(buf, s + 2);
  const month = pair(buf, s + 5);
  const day = pair(buf, s + 8);
  const hour = pair(buf, s + 11);
  const minute = pair(buf, s + 14);
  const second = pair(buf, s + 17);
  if (
    century < 0 ||
    yy < 0 ||
    month < 1 ||
    month > 12 ||
    day < 1 ||
    day > 31 ||
    hour < 0 ||
    hour > 23 ||
    minute < 0 ||
    minute > 59 ||
    second < 0 ||
    second > 60
  ) {
    return NO_TIME;
  }
  const year = century * 100 + yy;
  if (year < FIRST_YEAR || year >= FIRST_YEAR + YEARS) return NO_TIME;
  const days = (DAYS_BEFORE_MONTH[(year - FIRST_YEAR) * 12 + month - 1] as number) + day - 1;
  const secs = days * 86400 + hour * 3600 + minute * 60 + second;
  return secs >= -2147483647 && secs <= 2147483647 ? secs : NO_TIME;
}

/** Days from 2000-01-01 to the first of a month (H. Hinnant's days from civil). */
function daysToMonth(year: number, month: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5);
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 730425;
}

/**
 * The months' first days, looked up per row: the formula's five divisions cost more than the
 * rest of the parse. Years past these are more than 2^31 seconds from 2000 anyway.
 */
const FIRST_YEAR = 1900;
const YEARS = 200;
const DAYS_BEFORE_MONTH = Int32Array.from({ length: YEARS * 12 }, (_, i) =>
  daysToMonth(FIRST_YEAR + Math.floor(i / 12), (i % 12) + 1),
);

/** True when bytes s..e are exactly `YYYY-MM-DD HH:mm:ss` (digits and separators). */
export function isLocalTime(buf: Buffer, s: number, e: number): boolean {
  if (e - s !== 19) return false;
  for (let k = 0; k < 19; k++) {
    const c = buf[s + k] as number;
    if (k === 4 || k === 7) {
      if (c !== 0x2d) return false;
    } else if (k === 10) {
      if (c !== 0x20) return false;
    } else if (k === 13 || k === 16) {
      if (c !== 0x3a) return false;
    } else if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/** The number of the two ASCII digits at `at`, or -1 when either is not a digit. */
function pair(buf: Buffer, at: number): number {
  const hi = (buf[at] as number) - 48;
  const lo = (buf[at + 1] as number) - 48;
  return hi >= 0 && hi <= 9 && lo >= 0 && lo <= 9 ? hi * 10 + lo : -1;
}
