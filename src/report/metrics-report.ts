import { truncate } from "../format.js";
import { counted, moneyText, type ReportText } from "./i18n/index.js";
import { comparisonSection, isComparison, type MetricsComparison } from "./metrics-comparison.js";
import type { Kpi, ReportModel, ReportPlace, Section } from "./model.js";
import { leftOut } from "./value-text.js";

/**
 * The report of a campaign_metrics result: the change against another window (with compare_to),
 * campaigns ranked, recent rounds.
 */

/** Most categories one chart shows; a note says what is left out. */
export const MAX_CAMPAIGNS_CHARTED = 20;
export const MAX_TASKS_CHARTED = 60;

interface MetricsSums {
  task_count: number;
  sent_count: number;
  received_count: number;
  open_count: number;
  click_count: number;
  purchase_count: number;
  revenue: Record<string, number>;
  cost: Record<string, number>;
  computed_open_rate: number | null;
  computed_conversion_rate: number | null;
}

export interface CampaignMetricsData {
  window?: { kst?: string; utc?: { from: string; to: string } };
  matched_campaigns?: number;
  more_not_shown?: number;
  campaigns: Array<
    MetricsSums & { _id: string; name: string; schedule_type: string; is_ab_test: boolean }
  >;
  totals: MetricsSums;
  tasks?: Array<{
    _id: string;
    campaign_id: string;
    scheduled_at: string;
    channel: string;
    sent_count: number;
    received_count: number;
    open_count: number;
    purchase_count: number;
  }>;
  tasks_not_shown?: number;
  /** With compare_to: the other window and the change per metric. */
  comparison?: MetricsComparison;
}

/** The service's zone: campaign_metrics windows and rounds are read in KST. */
const KST = "Asia/Seoul";

export function metricsReport(
  data: CampaignMetricsData,
  place: ReportPlace,
  t: ReportText,
): ReportModel {
  const { m, f } = t;
  const c = m.metrics;
  const total = data.totals;
  const count = (v: number) => f.value(v, "count");
  const kpis: Kpi[] = [
    { label: c.campaigns, value: count(data.matched_campaigns ?? data.campaigns.length) },
    { label: c.rounds, value: count(total.task_count) },
    { label: c.sent, value: count(total.sent_count) },
    { label: c.received, value: count(total.received_count) },
    {
      label: c.openRate,
      value: f.value(total.computed_open_rate, "percent", m.page.missing),
      note: c.opensPerReceived,
    },
    { label: c.purchases, value: count(total.purchase_count) },
    { label: c.revenue, value: moneyText(t, total.revenue) },
  ];
  const shown = data.campaigns.slice(0, MAX_CAMPAIGNS_CHARTED);
  const label = (x: { name: string; _id: string }) => truncate(x.name || x._id, 26);
  const ranked: Section = { id: "campaigns", title: c.ranked, text: [], charts: [], tables: [] };
  if (shown.length === 0) ranked.text.push(c.noCampaigns);
  else {
    const more = leftOut(
      t,
      data.campaigns.length,
      shown.length,
      m.notes.moreCampaigns,
      place,
      "metrics",
    );
    const notShown = data.more_not_shown ?? 0;
    const notes = [more, notShown > 0 ? c.notReturned(counted(t, notShown)) : undefined].filter(
      (n): n is string => n !== undefined,
    );
    ranked.charts.push({
      id: "campaign-volume",
      title: c.volume,
      type: "hbar",
      categoryLabel: c.campaign,
      categories: shown.map(label),
      series: [
        { name: c.sent, values: shown.map((x) => x.sent_count) },
        { name: c.received, values: shown.map((x) => x.received_count) },
      ],
      format: "count",
      ...(notes.length > 0 ? { note: notes.join(" ") } : {}),
    });
    ranked.charts.push({
      id: "campaign-rates",
      title: c.rates,
      type: "hbar",
      categoryLabel: c.campaign,
      categories: shown.map(label),
      series: [
        { name: c.openRate, values: shown.map((x) => x.computed_open_rate) },
        { name: c.conversionRate, values: shown.map((x) => x.computed_conversion_rate) },
      ],
      format: "percent",
    });
    ranked.tables.push({
      caption: c.table,
      columns: [c.campaign, c.id, c.type, c.ab, c.rounds, c.purchases, c.revenue, c.cost],
      rows: shown.map((x) => [
        x.name,
        x._id,
        x.schedule_type,
        x.is_ab_test ? c.ab : "",
        count(x.task_count),
        count(x.purchase_count),
        moneyText(t, x.revenue),
        moneyText(t, x.cost),
      ]),
      numeric: [false, false, false, false, true, true, true, true],
    });
  }
  const rounds: Section = { id: "rounds", title: c.overTime, text: [], charts: [], tables: [] };
  const tasks = [...(data.tasks ?? [])].sort((a, b) =>
    a.scheduled_at.localeCompare(b.scheduled_at),
  );
  if (data.tasks === undefined) {
    rounds.text.push(c.askTasks);
  } else if (tasks.length === 0) {
    rounds.text.push(c.noRounds);
  } else {
    const recent = tasks.slice(-MAX_TASKS_CHARTED);
    const names = new Map(data.campaigns.map((x) => [x._id, x.name]));
    const more = tasks.length - recent.length + (data.tasks_not_shown ?? 0);
    rounds.charts.push({
      id: "rounds-over-time",
      title: c.overTime,
      type: "bar",
      categoryLabel: c.scheduled,
      categories: recent.map(
        (x) =>
          `${f.instant(x.scheduled_at, KST, true)} ${truncate(names.get(x.campaign_id) ?? x.campaign_id, 14)}`,
      ),
      series: [
        { name: c.received, values: recent.map((x) => x.received_count) },
        { name: c.opens, values: recent.map((x) => x.open_count) },
        { name: c.purchases, values: recent.map((x) => x.purchase_count) },
      ],
      format: "count",
      ...(more > 0 ? { note: c.earlierRounds(counted(t, more)) } : {}),
    });
  }
  const window = data.window?.utc;
  return {
    kind: "campaign_metrics",
    title: c.title,
    subtitle:
      window === undefined ? "" : c.window(f.instant(window.from, KST), f.instant(window.to, KST)),
    kpis,
    // The change leads: "compared to what?" is the question compare_to was asked for.
    sections: isComparison(data.comparison)
      ? [comparisonSection(data.comparison, t), ranked, rounds]
      : [ranked, rounds],
    notes: [],
  };
}
