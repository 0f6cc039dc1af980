import { roundRatio } from "../../format.js";
import type { Sums } from "./schemas.js";

/**
 * The change between two windows' sums: per summed count, per rate computed from the sums, and
 * per currency of money (amounts in different currencies are never compared or added).
 */

export const COMPARED_COUNTS = [
  "sent_count",
  "received_count",
  "open_count",
  "click_count",
  "purchase_count",
] as const;
export const COMPARED_RATES = [
  "computed_open_rate",
  "computed_click_rate",
  "computed_conversion_rate",
] as const;
export const COMPARED_MONEY = ["revenue", "cost"] as const;

export type CountKey = (typeof COMPARED_COUNTS)[number];
export type RateKey = (typeof COMPARED_RATES)[number];
export type MoneyKey = (typeof COMPARED_MONEY)[number];

export interface Change {
  previous: number | null;
  current: number | null;
  /** current - previous, in the metric's own unit (a ratio for rates). */
  delta: number | null;
  /** delta / previous as a percentage (12.5 = +12.5%); null when previous is 0 or missing. */
  pct: number | null;
}

export type Changes = Record<CountKey | RateKey, Change> & Record<MoneyKey, Record<string, Change>>;

export function changeOf(
  previous: number | null,
  current: number | null,
  round: (value: number) => number,
): Change {
  if (previous === null || current === null) return { previous, current, delta: null, pct: null };
  const delta = round(current - previous);
  const pct = previous === 0 ? null : Math.round((delta / previous) * 10_000) / 100;
  return { previous, current, delta, pct };
}

/** Sums of money are floating point (USD cents): a difference keeps no more than that noise. */
function roundAmount(value: number): number {
  return Math.round(value * 1_000_000) / 1_000_000;
}

const exact = (value: number): number => value;

function moneyChanges(
  previous: Record<string, number>,
  current: Record<string, number>,
): Record<string, Change> {
  const currencies = [...new Set([...Object.keys(current), ...Object.keys(previous)])];
  return Object.fromEntries(
    currencies.map((c) => [c, changeOf(previous[c] ?? 0, current[c] ?? 0, roundAmount)]),
  );
}

export function changesBetween(previous: Sums, current: Sums): Changes {
  const counts = Object.fromEntries(
    COMPARED_COUNTS.map((k) => [k, changeOf(previous[k], current[k], exact)]),
  ) as Record<CountKey, Change>;
  // Rates are compared as reported (4 decimals), so previous + delta = current exactly.
  const rates = Object.fromEntries(
    COMPARED_RATES.map((k) => [k, changeOf(previous[k], current[k], roundRatio)]),
  ) as Record<RateKey, Change>;
  return {
    ...counts,
    ...rates,
    revenue: moneyChanges(previous.revenue, current.revenue),
    cost: moneyChanges(previous.cost, current.cost),
  };
}
