import { fileValue, type ReportText } from "./i18n/index.js";
import type { Section, Tone } from "./model.js";

/**
 * campaign_metrics' comparison with another window (`compare_to`) as a small table: each metric
 * then and now, and its change with an arrow and a sign (▲ +12.5%, ▼ −2.6 pp), so the direction
 * reads without colour; the colour of the change only repeats it. Counts and money change in
 * percent of the earlier figure, rates in percentage points. Money is compared per currency.
 */

/** One metric in both windows, as campaign_metrics returns it. */
export interface MetricChange {
  previous: number | null;
  current: number | null;
  /** current - previous (a ratio for rates: 0.018 = +1.8 pp). */
  delta: number | null;
  /** delta / previous in percent (12.5 = +12.5%); null when previous is 0 or missing. */
  pct: number | null;
}

const COUNTS = [
  "sent_count",
  "received_count",
  "open_count",
  "click_count",
  "purchase_count",
] as const;
const RATES = ["computed_open_rate", "computed_click_rate", "computed_conversion_rate"] as const;
const MONEY = ["revenue", "cost"] as const;

/** campaign_metrics' structuredContent.comparison, as far as the report reads it. */
export interface MetricsComparison {
  compare_to?: "previous_period" | "same_period_last_year";
  /** The other window, KST ISO 8601 with its offset; task_to exclusive. */
  task_from: string;
  task_to: string;
  /** Campaigns matching the filters in the other window; 0: nothing to compare. */
  matched_campaigns?: number;
  change: Partial<Record<(typeof COUNTS)[number] | (typeof RATES)[number], MetricChange>> &
    Partial<Record<(typeof MONEY)[number], Record<string, MetricChange>>>;
}

const KST = "Asia/Seoul";
const KST_OFFSET_MS = 9 * 3_600_000;
const DAY_MS = 86_400_000;

/** A comparison the report can draw: the other window's bounds and a change per metric. */
export function isComparison(value: unknown): value is MetricsComparison {
  if (typeof value !== "object" || value === null) return false;
  const c = value as Record<string, unknown>;
  return (
    typeof c.task_from === "string" &&
    typeof c.task_to === "string" &&
    typeof c.change === "object" &&
    c.change !== null
  );
}

export function comparisonSection(comparison: MetricsComparison, t: ReportText): Section {
  const c = t.m.metrics;
  const compareTo =
    comparison.compare_to === "same_period_last_year" ? "same_period_last_year" : "previous_period";
  const section: Section = {
    id: "comparison",
    title: c.against[compareTo],
    text: [],
    charts: [],
    tables: [],
  };
  if (comparison.matched_campaigns === 0) {
    section.text.push(c.nothingThen);
    return section;
  }
  section.text.push(c.arrows);
  const rows: string[][] = [];
  const tones: Array<Array<Tone | null>> = [];
  const add = (label: string, change: MetricChange | undefined, kind: Kind, toned: boolean) => {
    if (change === undefined) return;
    const { text, tone } = changeCell(change, kind, t, toned);
    rows.push([label, figure(change.previous, kind, t), figure(change.current, kind, t), text]);
    tones.push([null, null, null, tone]);
  };
  const { change } = comparison;
  const labels: Record<(typeof COUNTS)[number] | (typeof RATES)[number], string> = {
    sent_count: c.sent,
    received_count: c.received,
    open_count: c.opens,
    click_count: c.clicks,
    purchase_count: c.purchases,
    computed_open_rate: c.openRate,
    computed_click_rate: c.clickRate,
    computed_conversion_rate: c.conversionRate,
  };
  for (const key of COUNTS) add(labels[key], change[key], { unit: "count" }, true);
  for (const key of RATES) add(labels[key], change[key], { unit: "rate" }, true);
  for (const key of MONEY) {
    for (const [currency, money] of Object.entries(change[key] ?? {})) {
      const label = c.inCurrency(key === "revenue" ? c.revenue : c.cost, fileValue(t, currency));
      // More cost is not worse by itself (more was sent): its change has no colour.
      add(label, money, { unit: "money", currency }, key === "revenue");
    }
  }
  section.tables.push({
    caption: c.compareCaption(c.periods[compareTo], windowSpan(comparison, t)),
    columns: [c.metric, c.previous, c.current, c.change],
    rows,
    numeric: [false, true, true, true],
    tones,
  });
  return section;
}

export type Kind = { unit: "count" } | { unit: "rate" } | { unit: "money"; currency: string };

function figure(value: number | null, kind: Kind, t: ReportText): string {
  if (value === null || !Number.isFinite(value)) return t.m.page.missing;
  if (kind.unit === "money") return t.f.money({ [kind.currency]: value });
  return t.f.value(value, kind.unit === "rate" ? "percent" : "count");
}

/**
 * "▲ +12.5%" for a count or an amount (its size by the earlier figure; "▲ +1,200" when that was
 * 0), "▼ −2.6 pp" for a rate. `toned`: a rise reads as better and a fall as worse; else the
 * cell has no tone.
 */
export function changeCell(
  change: MetricChange,
  kind: Kind,
  t: ReportText,
  toned = true,
): { text: string; tone: Tone | null } {
  const c = t.m.metrics;
  const { previous, current, delta, pct } = change;
  if (previous === null && current === null) return { text: t.m.page.missing, tone: null };
  if (previous === null) return { text: c.newNow, tone: null };
  if (current === null || delta === null || !Number.isFinite(delta)) {
    return { text: t.m.page.missing, tone: null };
  }
  if (delta === 0) return { text: c.noChange, tone: null };
  const arrow = delta > 0 ? "▲" : "▼";
  const sign = delta > 0 ? "+" : "−";
  let size: string;
  if (kind.unit === "rate") {
    const points = Math.abs(delta) * 100;
    // Two decimals where one would read as no change (0.04 pp, not 0.0 pp).
    size = c.points(`${sign}${t.f.decimal(points, points < 0.05 ? 2 : 1)}`);
  } else if (pct !== null && Number.isFinite(pct)) {
    size = t.f.signed(pct / 100, "percent");
  } else {
    size = `${sign}${figure(Math.abs(delta), kind, t)}`;
  }
  return { text: `${arrow} ${size}`, tone: toned ? (delta > 0 ? "better" : "worse") : null };
}

/**
 * The other window as the caption names it: its days (the last one included) when it runs from
 * midnight to midnight in KST, as campaign_metrics' windows of whole days do; else its instants.
 */
function windowSpan(comparison: MetricsComparison, t: ReportText): string {
  const from = Date.parse(comparison.task_from);
  const to = Date.parse(comparison.task_to);
  if (Number.isNaN(from) || Number.isNaN(to)) {
    return t.m.metrics.span(comparison.task_from, comparison.task_to);
  }
  const midnight = (ms: number) => (ms + KST_OFFSET_MS) % DAY_MS === 0;
  if (midnight(from) && midnight(to) && to > from) {
    const day = (ms: number) => new Date(ms + KST_OFFSET_MS).toISOString().slice(0, 10);
    return t.m.metrics.span(t.f.categoryFull(day(from)), t.f.categoryFull(day(to - DAY_MS)));
  }
  return t.m.metrics.span(
    t.f.instant(comparison.task_from, KST),
    t.f.instant(comparison.task_to, KST),
  );
}
