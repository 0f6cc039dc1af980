import { formatNumber, percent } from "../../format.js";
import {
  type Change,
  COMPARED_COUNTS,
  COMPARED_MONEY,
  COMPARED_RATES,
  type CountKey,
  type MoneyKey,
  type RateKey,
} from "./change.js";
import { COMPARE_LABELS } from "./compare-window.js";
import type { ComparisonOut } from "./schemas.js";

/**
 * The comparison in one line for the model, biggest relative changes first, each with its sign:
 * "open rate 12.4% (▲ +1.8 pp)", "sent 120,000 (▼ -3.5%)". Rates move in percentage points.
 */

const COUNT_LABELS: Record<CountKey, string> = {
  sent_count: "sent",
  received_count: "received",
  open_count: "opens",
  click_count: "clicks",
  purchase_count: "purchases",
};
const RATE_LABELS: Record<RateKey, string> = {
  computed_open_rate: "open rate",
  computed_click_rate: "click rate",
  computed_conversion_rate: "conversion rate",
};
const MONEY_LABELS: Record<MoneyKey, string> = { revenue: "revenue", cost: "cost" };

interface Item {
  label: string;
  change: Change;
  text: string;
}

/** Relative changes under this (in percent) are listed by name only, after the others. */
const LITTLE_PCT = 1;

const arrow = (delta: number) => (delta > 0 ? "▲" : "▼");
/** One decimal, or two when one would read as no change ("-0.04 pp", not "-0.0 pp"). */
function signed(value: number): string {
  const digits = Math.abs(value) < 0.05 ? 2 : 1;
  return `${value > 0 ? "+" : ""}${value.toFixed(digits)}`;
}

function countText(value: number | null, unit: string): string {
  return value === null ? "-" : `${formatNumber(value)}${unit}`;
}

/** "open rate 12.4% (▲ +1.8 pp)"; undefined when there is nothing in either window. */
function describeChange(
  label: string,
  kind: "rate" | "amount",
  change: Change,
  unit: string,
): string | undefined {
  const { previous, current, delta, pct } = change;
  const shown = `${label} ${kind === "rate" ? percent(current) : countText(current, unit)}`;
  if (previous === null && current === null) return undefined;
  if (previous === null) return `${shown} (none before)`;
  if (current === null || delta === null) {
    const was = kind === "rate" ? percent(previous) : countText(previous, unit);
    return `${shown} (was ${was})`;
  }
  if (previous === 0 && current === 0) return undefined;
  if (delta === 0) return `${shown} (no change)`;
  if (kind === "rate") return `${shown} (${arrow(delta)} ${signed(delta * 100)} pp)`;
  if (pct === null) return `${shown} (${arrow(delta)} from 0)`;
  return `${shown} (${arrow(delta)} ${signed(pct)}%)`;
}

function little(change: Change): boolean {
  return change.delta === 0 || (change.pct !== null && Math.abs(change.pct) < LITTLE_PCT);
}

/** Larger relative changes first; a change from nothing (no relative size) leads. */
function weight(change: Change): number {
  if (change.delta === 0) return -1;
  if (change.pct === null) return Number.POSITIVE_INFINITY;
  return Math.abs(change.pct);
}

function items(comparison: ComparisonOut): Item[] {
  const { change } = comparison;
  const out: Item[] = [];
  const add = (label: string, c: Change, text: string | undefined) => {
    if (text !== undefined) out.push({ label, change: c, text });
  };
  for (const key of COMPARED_RATES) {
    const label = RATE_LABELS[key];
    add(label, change[key], describeChange(label, "rate", change[key], ""));
  }
  for (const key of COMPARED_COUNTS) {
    const label = COUNT_LABELS[key];
    add(label, change[key], describeChange(label, "amount", change[key], ""));
  }
  for (const key of COMPARED_MONEY) {
    for (const [currency, c] of Object.entries(change[key])) {
      const label = `${MONEY_LABELS[key]} ${currency}`;
      add(label, c, describeChange(MONEY_LABELS[key], "amount", c, ` ${currency}`));
    }
  }
  // Stable: equal weights keep rates, then counts, then money.
  return out.sort((a, b) => weight(b.change) - weight(a.change));
}

export function comparisonLines(
  comparison: ComparisonOut,
  period: string,
  shownWithPrevious: number,
  shown: number,
  filtered: boolean,
): string[] {
  const against = `Against ${COMPARE_LABELS[comparison.compare_to]} (${period}, KST)`;
  if (comparison.matched_campaigns === 0) {
    const why = filtered
      ? "no campaign matching these filters had rounds then"
      : "no campaign had rounds then (the service's data may not reach back that far)";
    return [`${against}: no data, ${why}, so there is nothing to compare.`];
  }
  const all = items(comparison);
  const moved = all.filter((i) => !little(i.change)).map((i) => i.text);
  const still = all.filter((i) => little(i.change)).map((i) => i.label);
  const rest = `within ±${LITTLE_PCT}%: ${still.join(", ")}`;
  const lines = [`${against}: ${[...moved, ...(still.length === 0 ? [] : [rest])].join("; ")}.`];
  if (shown > 0) {
    lines.push(
      `${shownWithPrevious} of the ${shown} campaigns shown also had rounds then (their sums there: campaigns[].previous).`,
    );
  }
  return lines;
}
