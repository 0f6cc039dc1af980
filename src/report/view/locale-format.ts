import type { ValueFormat } from "../model.js";

/**
 * Numbers, money and dates of the page in its locale, through Intl: `ko-KR` writes 1.2만, 45초,
 * ₩1,200,000 and 2025. 3. 1., `de-DE` 1.234 and 12,3 %. The view writes axis ticks, the legend
 * and the cells of a chart's table view with it; the report model (../model.ts) its figures.
 */

export interface Formats {
  /** The locale in use; undefined means the browser's own. */
  locale: string | undefined;
  /** A value in a table cell or the legend; null as `missing`. */
  value(value: number | null | undefined, format: ValueFormat, missing?: string): string;
  /** A difference with its sign (+1.2%, −0.4%); null as "-". */
  signed(value: number | null | undefined, format: ValueFormat): string;
  /** An axis tick: shorter than table text (12K, 3.4M, 12%, 4 min). */
  axis(value: number, format: ValueFormat): string;
  /** A category on an axis: an ISO date as a short local date, any other text as it is. */
  categoryShort(label: string): string;
  /** A category in full (the legend while hovering): an ISO date as a local date. */
  categoryFull(label: string): string;
  /** A number with exactly `digits` decimals (a p-value). */
  decimal(value: number, digits: number): string;
  /**
   * Amounts by currency code, each in its currency's own digits (KRW none), never added across
   * currencies: `{"KRW": 1200000, "USD": 30}` as ₩1,200,000 + US$30.00. A code Intl does not
   * take (a file's own text) is written after the number.
   */
  money(amounts: Record<string, number>): string;
  /**
   * A local time as an export file writes it ("2025-03-01 10:00:00", no zone), in full
   * (2025. 3. 1. 10:00) or `short` (3. 1. 10:00); a date alone as a date; other text as it is.
   */
  localTime(text: string, short?: boolean): string;
  /** An instant (ISO 8601 with its offset) as a date and time in `timeZone`. */
  instant(iso: string, timeZone: string, short?: boolean): string;
}

/** A BCP 47 tag Intl accepts, or undefined (the browser's locale) for none or a bad one. */
export function usableLocale(locale: string | undefined): string | undefined {
  if (locale === undefined || locale.trim() === "") return undefined;
  try {
    return Intl.getCanonicalLocales(locale)[0];
  } catch {
    return undefined;
  }
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const LOCAL_TIME = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?$/;

export function formatsFor(requested: string | undefined): Formats {
  const locale = usableLocale(requested);
  const cache = new Map<string, Intl.NumberFormat>();
  const number = (options: Intl.NumberFormatOptions) => {
    const key = JSON.stringify(options);
    let f = cache.get(key);
    if (f === undefined) {
      f = new Intl.NumberFormat(locale, options);
      cache.set(key, f);
    }
    return f;
  };
  const shortDate = new Intl.DateTimeFormat(locale, {
    month: "short",
    day: "numeric",
    timeZone: "UTC",
  });
  const fullDate = new Intl.DateTimeFormat(locale, { dateStyle: "medium", timeZone: "UTC" });
  const times = new Map<string, Intl.DateTimeFormat>();
  /** Date and time in `timeZone`, on a 24-hour clock (an export's times are). */
  const dateTime = (timeZone: string, short: boolean) => {
    const key = `${timeZone}|${short}`;
    let f = times.get(key);
    if (f === undefined) {
      f = new Intl.DateTimeFormat(
        locale,
        short
          ? {
              month: "numeric",
              day: "numeric",
              hour: "2-digit",
              minute: "2-digit",
              hourCycle: "h23",
              timeZone,
            }
          : { dateStyle: "medium", timeStyle: "short", hourCycle: "h23", timeZone },
      );
      times.set(key, f);
    }
    return f;
  };
  const asDate = (label: string): Date | undefined => {
    const m = ISO_DATE.exec(label);
    if (m === null) return undefined;
    const date = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
    return Number.isNaN(date.getTime()) ? undefined : date;
  };

  /**
   * Seconds in the unit a reader would use: 45 s, 4.2 min, 1.5 h, 2.0 d; `digits` of the unit
   * (none for seconds), or on an axis as few as the amount needs (5 min, 1.5 h).
   */
  const duration = (seconds: number, digits: number | "as-needed") => {
    const abs = Math.abs(seconds);
    const [unit, amount] =
      abs < 90
        ? (["second", seconds] as const)
        : abs < 5400
          ? (["minute", seconds / 60] as const)
          : abs < 172_800
            ? (["hour", seconds / 3600] as const)
            : (["day", seconds / 86_400] as const);
    const fraction =
      unit === "second" ? 0 : digits === "as-needed" ? (Number.isInteger(amount) ? 0 : 1) : digits;
    return number({
      style: "unit",
      unit,
      unitDisplay: "short",
      minimumFractionDigits: fraction,
      maximumFractionDigits: fraction,
    }).format(amount);
  };

  const value = (v: number, format: ValueFormat): string => {
    switch (format) {
      case "count":
        return number({ maximumFractionDigits: 0 }).format(Math.round(v));
      case "number":
        return Number.isInteger(v)
          ? number({ maximumFractionDigits: 0 }).format(v)
          : number({ minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(v);
      case "percent":
        return number({
          style: "percent",
          minimumFractionDigits: 1,
          maximumFractionDigits: 1,
        }).format(v);
      case "seconds":
        return duration(v, 1);
    }
  };

  return {
    locale,
    value(v, format, missing = "-") {
      return v === null || v === undefined || !Number.isFinite(v) ? missing : value(v, format);
    },
    signed(v, format) {
      if (v === null || v === undefined || !Number.isFinite(v)) return "-";
      const text = value(Math.abs(v), format);
      return v < 0 ? `−${text}` : v > 0 ? `+${text}` : text;
    },
    axis(v, format) {
      if (format === "percent") {
        return number({ style: "percent", maximumFractionDigits: 1 }).format(v);
      }
      if (format === "seconds") return duration(v, "as-needed");
      if (Math.abs(v) >= 1e4) {
        return number({ notation: "compact", maximumFractionDigits: 1 }).format(v);
      }
      return number({ maximumFractionDigits: 2 }).format(v);
    },
    categoryShort(label) {
      const date = asDate(label);
      return date === undefined ? label : shortDate.format(date);
    },
    categoryFull(label) {
      const date = asDate(label);
      return date === undefined ? label : fullDate.format(date);
    },
    decimal(v, digits) {
      return number({ minimumFractionDigits: digits, maximumFractionDigits: digits }).format(v);
    },
    money(amounts) {
      const parts = Object.entries(amounts)
        .filter(([, v]) => v !== 0 && Number.isFinite(v))
        .map(([currency, v]) => {
          try {
            return number({ style: "currency", currency }).format(v);
          } catch {
            // Not an ISO 4217 code (e.g. "(none)" for amounts without a currency property).
            return `${value(v, "number")} ${currency}`;
          }
        });
      return parts.length === 0 ? value(0, "count") : parts.join(" + ");
    },
    localTime(text, short = false) {
      const m = LOCAL_TIME.exec(text);
      if (m === null) {
        const date = asDate(text);
        return date === undefined ? text : fullDate.format(date);
      }
      const [, y, mo, d, h, mi, s] = m.map(Number) as number[];
      const at = new Date(Date.UTC(y ?? 0, (mo ?? 1) - 1, d, h, mi, Number.isNaN(s) ? 0 : s));
      return Number.isNaN(at.getTime()) ? text : dateTime("UTC", short).format(at);
    },
    instant(iso, timeZone, short = false) {
      const ms = Date.parse(iso);
      if (Number.isNaN(ms)) return iso;
      try {
        return dateTime(timeZone, short).format(new Date(ms));
      } catch {
        return iso;
      }
    },
  };
}
