import type { MetricsCampaign, MetricsTask } from "../../api/schemas.js";
import { mayBeAggregating } from "../../exports/metrics-vs-export.js";
import { roundRatio } from "../../format.js";
import type { CampaignMetricsArgs, CampaignOut, SortKey, Sums, TaskOut } from "./schemas.js";

/** campaign_metrics' arithmetic: which campaigns match, their sums and rates, their order. */

export function matches(campaign: MetricsCampaign, args: CampaignMetricsArgs): boolean {
  if (
    args.campaign_ids !== undefined &&
    args.campaign_ids.length > 0 &&
    !args.campaign_ids.includes(campaign._id)
  ) {
    return false;
  }
  if (args.tag !== undefined && args.tag !== "") {
    const tag = args.tag.toLowerCase();
    if (!campaign.tags.some((t) => t.toLowerCase() === tag)) return false;
  }
  if (
    args.name_contains !== undefined &&
    !campaign.name.toLowerCase().includes(args.name_contains.toLowerCase())
  ) {
    return false;
  }
  return campaign.tasks.length > 0;
}

function emptySums(): Sums {
  return {
    task_count: 0,
    sent_count: 0,
    received_count: 0,
    open_count: 0,
    click_count: 0,
    purchase_count: 0,
    purchase_count_by_open: 0,
    revenue: {},
    cost: {},
    rounds_aggregating: 0,
    computed_open_rate: null,
    computed_click_rate: null,
    computed_conversion_rate: null,
  };
}

function addMoney(target: Record<string, number>, currency: string, amount: number): void {
  if (amount === 0 && currency === "") return;
  target[currency] = (target[currency] ?? 0) + amount;
}

function withRates(s: Sums): Sums {
  const ratio = (a: number, b: number) => (b === 0 ? null : roundRatio(a / b));
  s.computed_open_rate = ratio(s.open_count, s.received_count);
  s.computed_click_rate = ratio(s.click_count, s.received_count);
  // The service's own conversion_rate counts purchases by open; purchase_count also holds the
  // control group's, which would put opens and purchases of different people in one ratio.
  s.computed_conversion_rate = ratio(s.purchase_count_by_open, s.open_count);
  return s;
}

/** Whether a round may still be aggregating (see metrics-vs-export.ts). */
export type IsAggregating = (t: MetricsTask) => boolean;

/** IsAggregating for the rounds of `campaigns`, each judged by its own campaign's deadline. */
export function aggregatingIn(campaigns: readonly MetricsCampaign[], now: number): IsAggregating {
  const byId = new Map(campaigns.map((c) => [c._id, c]));
  return (t) => {
    const campaign = byId.get(t.campaign_id);
    return campaign !== undefined && mayBeAggregating(t, campaign, now);
  };
}

function addTask(s: Sums, t: MetricsTask, aggregating: boolean): void {
  s.task_count += 1;
  if (aggregating) s.rounds_aggregating += 1;
  s.sent_count += t.sent_count;
  s.received_count += t.received_count;
  s.open_count += t.open_count;
  s.click_count += t.click_count;
  s.purchase_count += t.purchase_count;
  s.purchase_count_by_open += t.purchase_count_by_open;
  addMoney(s.revenue, t.revenue_currency, t.revenue);
  addMoney(s.cost, t.cost_currency, t.cost);
}

export function summarizeCampaign(
  campaign: MetricsCampaign,
  aggregating: IsAggregating,
): CampaignOut {
  const s = emptySums();
  for (const task of campaign.tasks) addTask(s, task, aggregating(task));
  const times = campaign.tasks.map((t) => t.scheduled_at).sort();
  return {
    _id: campaign._id,
    name: campaign.name,
    schedule_type: campaign.schedule_type,
    tags: campaign.tags,
    is_ab_test: campaign.is_ab_test,
    channels: [...new Set(campaign.tasks.map((t) => t.channel))].sort(),
    conversion_event_type: campaign.conversion.event_type,
    first_scheduled_at: times[0] ?? "",
    last_scheduled_at: times[times.length - 1] ?? "",
    ...withRates(s),
  };
}

export function sumAll(campaigns: MetricsCampaign[], aggregating: IsAggregating): Sums {
  const s = emptySums();
  for (const c of campaigns) for (const task of c.tasks) addTask(s, task, aggregating(task));
  return withRates(s);
}

export function sortCampaigns(list: CampaignOut[], key: SortKey): void {
  const num = (v: number | null) => v ?? -1;
  const revenue = (c: CampaignOut) => c.revenue.KRW ?? Object.values(c.revenue)[0] ?? 0;
  const by: Record<typeof key, (a: CampaignOut, b: CampaignOut) => number> = {
    sent: (a, b) => b.sent_count - a.sent_count,
    open_rate: (a, b) => num(b.computed_open_rate) - num(a.computed_open_rate),
    conversion_rate: (a, b) => num(b.computed_conversion_rate) - num(a.computed_conversion_rate),
    revenue: (a, b) => revenue(b) - revenue(a),
    purchases: (a, b) => b.purchase_count - a.purchase_count,
    name: (a, b) => a.name.localeCompare(b.name),
    latest: (a, b) => b.last_scheduled_at.localeCompare(a.last_scheduled_at),
  };
  list.sort((a, b) => by[key](a, b) || a._id.localeCompare(b._id));
}

export function taskRow(t: MetricsTask, aggregating: boolean): TaskOut {
  return {
    _id: t._id,
    campaign_id: t.campaign_id,
    scheduled_at: t.scheduled_at,
    channel: t.channel,
    sent_count: t.sent_count,
    received_count: t.received_count,
    open_count: t.open_count,
    click_count: t.click_count,
    purchase_count: t.purchase_count,
    revenue: t.revenue,
    revenue_currency: t.revenue_currency,
    cost: t.cost,
    cost_currency: t.cost_currency,
    open_user_count: t.open_user_count,
    aggregating,
    open_rate: t.open_rate === null ? null : roundRatio(t.open_rate),
    conversion_rate: t.conversion_rate === null ? null : roundRatio(t.conversion_rate),
  };
}
