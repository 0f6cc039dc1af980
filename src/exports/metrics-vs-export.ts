import { DateTime } from "luxon";
import {
  describeWindowKst,
  formatMetricsParam,
  type MetricsWindow,
  windowToExportDates,
  zoneLabel,
} from "../api/dates.js";
import { AGGREGATION_GRACE_HOURS } from "../api/limits.js";
import { roundReadiness } from "../api/round-readiness.js";
import type { MetricsCampaign, MetricsTask } from "../api/schemas.js";
import { callHint, formatCount, formatNumber } from "../format.js";

/**
 * Where campaign_metrics and a campaign CSV export of the same window may differ, and why: rules
 * of the service, worded once here so both tools state them alike. Everything else (rounds, sent,
 * received, opens, clicks, purchases and KRW revenue) is counted from the same events and agrees.
 *
 * 1. Currency. A metrics round has one `revenue` in one `revenue_currency` (spec 2.6), and the
 *    service adds only payments in KRW to revenue (spec 2.5, 전환 수익), while every conversion
 *    counts as a purchase. A CSV's conversion rows keep each payment's own currency.
 * 2. Aggregation. Only rounds whose performance aggregation has finished go into an export (spec
 *    4.2 rule 4); the metrics endpoint answers for every round in the window, recent ones too.
 * 3. Dates. A metrics window is read in KST (spec 4.4); an export's `from`/`to` are whole days in
 *    the application's zone (spec 4.2), so the export of a window's dates can cover other hours.
 */

/** The metrics currency the service adds payments in (spec 2.5: only payments in KRW). */
export const METRICS_REVENUE_CURRENCY = "KRW";

/** The currency rule, naming the revenue currencies the answer had (KRW when it had none). */
export function revenueRule(currencies: readonly string[]): string {
  const named = currencies.length > 0 ? currencies.join(", ") : METRICS_REVENUE_CURRENCY;
  return `the service gives one revenue per round in its revenue_currency (here ${named}) and adds no payment made in another currency (spec 2.5: only ${METRICS_REVENUE_CURRENCY} payments are added), while purchases count every conversion; summarize_export of an export gives revenue per currency`;
}

const AGGREGATION_RULE =
  "an export holds only rounds whose aggregation had finished when it was made (spec 4.2), while campaign_metrics also counts recent rounds still being aggregated";

/**
 * Whether a round may still be aggregating, so an export made now may leave it out: it is not
 * yet past its expected aggregation (api/round-readiness.ts).
 */
export function mayBeAggregating(
  task: MetricsTask,
  campaign: MetricsCampaign,
  now: number,
): boolean {
  return roundReadiness(task, campaign).expected > now;
}

/** The hours an export of the window's dates covers, when they are not the window's own. */
export function exportCoverage(
  window: MetricsWindow,
  zone: string,
): { dates: { from: string; to: string }; covers: MetricsWindow } | undefined {
  const dates = windowToExportDates(window, zone);
  const covers = {
    from: DateTime.fromISO(dates.from, { zone }).startOf("day"),
    to: DateTime.fromISO(dates.to, { zone }).startOf("day").plus({ days: 1 }),
  };
  const same =
    covers.from.toMillis() === window.from.toMillis() &&
    covers.to.toMillis() === window.to.toMillis();
  return same ? undefined : { dates, covers };
}

/** campaign_metrics' notes on how an export of its window may differ, in the order of the rules. */
export function metricsVsExport(input: {
  window: MetricsWindow;
  revenueCurrencies: readonly string[];
  zone: string;
  aggregating: number;
  firstAggregating: string | undefined;
}): string[] {
  const notes = [`Revenue: ${revenueRule(input.revenueCurrencies)}.`];
  if (input.aggregating > 0) {
    notes.push(
      `${formatCount(input.aggregating)} round(s)${input.firstAggregating === undefined ? "" : ` (scheduled from ${input.firstAggregating})`} are less than ${AGGREGATION_GRACE_HOURS} h past their conversion deadline (or not yet at it), so may still be aggregating (rounds_aggregating; "aggregating" in tasks): ${AGGREGATION_RULE}. Their figures can still grow.`,
    );
  }
  const coverage = exportCoverage(input.window, input.zone);
  if (coverage !== undefined) {
    notes.push(
      `Dates: start_export reads from/to as whole days in the application's zone (${zoneLabel(input.zone)}), so ${coverage.dates.from} to ${coverage.dates.to} covers ${describeWindowKst(coverage.covers)}, not exactly this window; ${callHint("campaign_metrics", { task_from: formatMetricsParam(coverage.covers.from), task_to: formatMetricsParam(coverage.covers.to) })} gives that export's rounds.`,
    );
  }
  return notes;
}

/** summarize_export's notes for a campaign CSV: how campaign_metrics counts the same rounds. */
export function exportVsMetrics(
  byCurrency: ReadonlyArray<{ currency: string; amount: number; conversions: number }>,
): string[] {
  const conversions = byCurrency.reduce((sum, c) => sum + c.conversions, 0);
  const others = byCurrency.filter(
    (c) => c.currency !== METRICS_REVENUE_CURRENCY && c.conversions > 0,
  );
  const notes: string[] = [];
  // The other difference, rounds still aggregating, the summary's headline already states.
  if (others.length > 0) {
    const krw = byCurrency.find((c) => c.currency === METRICS_REVENUE_CURRENCY);
    const otherText = others
      .map((c) => `${formatNumber(c.amount)} ${c.currency} (${formatCount(c.conversions)})`)
      .join(", ");
    notes.push(
      `campaign_metrics counts all ${formatCount(conversions)} conversions as purchases, but its revenue holds only the ${METRICS_REVENUE_CURRENCY} payments (${formatNumber(krw?.amount ?? 0)} ${METRICS_REVENUE_CURRENCY}, ${formatCount(krw?.conversions ?? 0)} conversions); payments in other currencies are in no campaign_metrics revenue: ${otherText}.`,
    );
  }
  return notes;
}
