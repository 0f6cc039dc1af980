import { formatCount, money, percent, truncate } from "../format.js";
import type { Kpi, ReportModel, ReportPlace, Section } from "./model.js";
import { leftOut } from "./value-text.js";

/** The report of a campaign_metrics result: campaigns ranked, recent rounds. */

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
  window?: { kst?: string };
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
}

export function metricsReport(m: CampaignMetricsData, place: ReportPlace): ReportModel {
  const t = m.totals;
  const kpis: Kpi[] = [
    { label: "Campaigns", value: formatCount(m.matched_campaigns ?? m.campaigns.length) },
    { label: "Rounds", value: formatCount(t.task_count) },
    { label: "Sent", value: formatCount(t.sent_count) },
    { label: "Received", value: formatCount(t.received_count) },
    { label: "Open rate", value: percent(t.computed_open_rate), note: "opens / received" },
    { label: "Purchases", value: formatCount(t.purchase_count) },
    { label: "Revenue", value: money(t.revenue) },
  ];
  const shown = m.campaigns.slice(0, MAX_CAMPAIGNS_CHARTED);
  const label = (c: { name: string; _id: string }) => truncate(c.name || c._id, 26);
  const ranked: Section = {
    id: "campaigns",
    title: "Campaigns ranked",
    text: [],
    charts: [],
    tables: [],
  };
  if (shown.length === 0) ranked.text.push("No campaign has rounds in this window.");
  else {
    const more = leftOut(m.campaigns.length, shown.length, "campaigns", place, "metrics");
    const notShown = m.more_not_shown ?? 0;
    ranked.charts.push({
      id: "campaign-volume",
      title: "Sent and received per campaign",
      type: "hbar",
      categoryLabel: "Campaign",
      categories: shown.map(label),
      series: [
        { name: "Sent", values: shown.map((c) => c.sent_count) },
        { name: "Received", values: shown.map((c) => c.received_count) },
      ],
      format: "count",
      ...(more !== undefined || notShown > 0
        ? {
            note: [
              more,
              notShown > 0
                ? `${formatCount(notShown)} matching campaigns not returned (raise top_n).`
                : "",
            ]
              .filter(Boolean)
              .join(" "),
          }
        : {}),
    });
    ranked.charts.push({
      id: "campaign-rates",
      title: "Open and conversion rate per campaign",
      type: "hbar",
      categoryLabel: "Campaign",
      categories: shown.map(label),
      series: [
        { name: "Open rate", values: shown.map((c) => c.computed_open_rate) },
        {
          name: "Conversion rate (by opens)",
          values: shown.map((c) => c.computed_conversion_rate),
        },
      ],
      format: "percent",
    });
    ranked.tables.push({
      caption: "Campaigns with their IDs, rounds and money",
      columns: ["Campaign", "_id", "Type", "A/B", "Rounds", "Purchases", "Revenue", "Cost"],
      rows: shown.map((c) => [
        c.name,
        c._id,
        c.schedule_type,
        c.is_ab_test ? "A/B" : "",
        formatCount(c.task_count),
        formatCount(c.purchase_count),
        money(c.revenue),
        money(c.cost),
      ]),
      numeric: [false, false, false, false, true, true, true, true],
    });
  }
  const rounds: Section = {
    id: "rounds",
    title: "Rounds over time",
    text: [],
    charts: [],
    tables: [],
  };
  const tasks = [...(m.tasks ?? [])].sort((a, b) => a.scheduled_at.localeCompare(b.scheduled_at));
  if (m.tasks === undefined) {
    rounds.text.push(
      'Call campaign_metrics with "include_tasks": true to see each round over time.',
    );
  } else if (tasks.length === 0) {
    rounds.text.push("No rounds returned.");
  } else {
    const recent = tasks.slice(-MAX_TASKS_CHARTED);
    const names = new Map(m.campaigns.map((c) => [c._id, c.name]));
    const more = tasks.length - recent.length + (m.tasks_not_shown ?? 0);
    rounds.charts.push({
      id: "rounds-over-time",
      title: "Rounds over time",
      type: "bar",
      categoryLabel: "Scheduled (KST)",
      categories: recent.map(
        (x) =>
          `${kstMinute(x.scheduled_at)} ${truncate(names.get(x.campaign_id) ?? x.campaign_id, 14)}`,
      ),
      series: [
        { name: "Received", values: recent.map((x) => x.received_count) },
        { name: "Opens", values: recent.map((x) => x.open_count) },
        { name: "Purchases", values: recent.map((x) => x.purchase_count) },
      ],
      format: "count",
      ...(more > 0 ? { note: `${formatCount(more)} earlier round(s) not drawn.` } : {}),
    });
  }
  return {
    kind: "campaign_metrics",
    title: "Campaign metrics",
    subtitle: m.window?.kst === undefined ? "" : `Window ${m.window.kst}`,
    kpis,
    sections: [ranked, rounds],
    notes: [],
  };
}

/** "2026-11-20T10:00:00Z" as "11-20 19:00" in KST (the service's zone; fixed +9, no DST). */
function kstMinute(iso: string): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso.slice(5, 16);
  return new Date(ms + 9 * 3600_000).toISOString().slice(5, 16).replace("T", " ");
}
