import { counted, fileValue, type ReportText } from "./i18n/index.js";
import type { Chart, RangeFlag, Section } from "./model.js";

/**
 * A campaign's rates against its channel's recent campaigns (summarize_export's `baseline`, from
 * the history): per rate a box from the 25th to the 75th percentile with a line at the median,
 * and the campaign's own rate as a dot; a rate outside the usual range (1.5 box lengths beyond
 * the box) is said in words above the chart. Nothing is drawn without a baseline.
 */

export const BASELINE_RATES = ["delivery", "open", "click", "conversion", "failure"] as const;
export type BaselineRate = (typeof BASELINE_RATES)[number];

/** One rate: the campaign's value and its channel's quartiles, all ratios (0.124 = 12.4%). */
export interface BaselineMetric {
  value: number | null;
  median: number | null;
  p25: number | null;
  p75: number | null;
  /** Outside the 1.5 IQR fences; null within them. */
  flag: RangeFlag | null;
}

/** summarize_export's `baseline` (campaign CSV), as far as the report reads it. */
export interface Baseline {
  /** The channel, or the channel mix of a multi-channel campaign. */
  channel: string;
  /** How many of the channel's campaigns the quartiles are over. */
  campaigns: number;
  /** Their first and last send (dates or the file's local times), when given. */
  window?: { from: string; to: string } | null;
  metrics: Partial<Record<BaselineRate, BaselineMetric>>;
}

const isRatio = (v: unknown) => v === null || (typeof v === "number" && Number.isFinite(v));

function isMetric(value: unknown): value is BaselineMetric {
  if (typeof value !== "object" || value === null) return false;
  const m = value as Record<string, unknown>;
  return (
    isRatio(m.value) &&
    isRatio(m.median) &&
    isRatio(m.p25) &&
    isRatio(m.p75) &&
    (m.flag === null || m.flag === undefined || m.flag === "above" || m.flag === "below")
  );
}

/** A baseline the report can draw: a channel, a count of campaigns and at least one rate. */
export function isBaseline(value: unknown): value is Baseline {
  if (typeof value !== "object" || value === null) return false;
  const b = value as Record<string, unknown>;
  if (typeof b.channel !== "string" || typeof b.campaigns !== "number") return false;
  if (typeof b.metrics !== "object" || b.metrics === null) return false;
  const metrics = b.metrics as Record<string, unknown>;
  return BASELINE_RATES.some((r) => metrics[r] !== undefined && isMetric(metrics[r]));
}

export function baselineSection(baseline: Baseline, t: ReportText): Section {
  const { m, f } = t;
  const b = m.baseline;
  const channel = fileValue(t, baseline.channel);
  const rates = BASELINE_RATES.flatMap((rate) => {
    const metric = baseline.metrics[rate];
    return metric !== undefined && isMetric(metric) ? [{ rate, metric }] : [];
  });
  const campaigns = counted(t, baseline.campaigns);
  const window = baseline.window;
  const span =
    typeof window?.from === "string" && typeof window.to === "string"
      ? b.span(f.localTime(window.from), f.localTime(window.to))
      : undefined;
  const pct = (v: number | null) => f.value(v, "percent", m.page.missing);
  const chart: Chart = {
    id: "baseline-rates",
    title: b.chart(channel),
    type: "box",
    categoryLabel: b.rate,
    categories: rates.map((r) => b.rates[r.rate]),
    series: [
      { name: b.thisCampaign, values: rates.map((r) => r.metric.value) },
      { name: b.median, values: rates.map((r) => r.metric.median) },
      { name: b.p25, values: rates.map((r) => r.metric.p25) },
      { name: b.p75, values: rates.map((r) => r.metric.p75) },
    ],
    format: "percent",
    flags: rates.map((r) => r.metric.flag ?? null),
    note: b.note(channel, campaigns, span),
  };
  const flagged = rates.flatMap(({ rate, metric }) => {
    if (metric.flag === "above") {
      return [b.aboveText(b.rates[rate], pct(metric.value), pct(metric.median))];
    }
    if (metric.flag === "below") {
      return [b.belowText(b.rates[rate], pct(metric.value), pct(metric.median))];
    }
    return [];
  });
  return {
    id: "baseline",
    title: b.section,
    text: flagged.length > 0 ? flagged : [b.allWithin(channel, campaigns)],
    charts: [chart],
    tables: [],
  };
}
