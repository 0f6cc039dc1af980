import type { ValueFormat } from "../model.js";

/**
 * Numbers and dates the page writes itself (axis ticks, the legend, the cells of a chart's table
 * view), in the host's locale through Intl: `ko-KR` writes 1.2만 and 45초, `de-DE` 1.234 and
 * 12,3 %. The rest of the page's text comes written from the report model.
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
  };
}
