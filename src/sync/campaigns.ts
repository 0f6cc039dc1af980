import { DateTime } from "luxon";
import { formatMetricsParam, splitMetricsWindow } from "../api/dates.js";
import { EXPORT_AB_ROUNDS_PER_TASK } from "../api/limits.js";
import { roundReadiness } from "../api/round-readiness.js";
import type { MetricsCampaign, MetricsTask } from "../api/schemas.js";
import type { CrmApi } from "../api/types.js";
import type { WindowRound } from "./plan.js";
import type { SyncWindow } from "./window.js";

/** A campaign with rounds in the window, as campaign_metrics finds it. */
export interface WindowCampaign {
  id: string;
  name: string;
  rounds: WindowRound[];
}

/**
 * The campaigns with rounds (tasks) scheduled in the window: campaign_metrics' request, one per
 * span the service allows, each round once and only rounds scheduled inside the window.
 */
export async function campaignsInWindow(
  api: CrmApi,
  window: SyncWindow,
  zone: string,
  signal: AbortSignal,
): Promise<WindowCampaign[]> {
  const found = new Map<string, { campaign: MetricsCampaign; tasks: Map<string, MetricsTask> }>();
  const from = window.from.toMillis();
  const to = window.to.toMillis();
  for (const span of splitMetricsWindow(window)) {
    const response = await api.campaignMetrics(
      { task_from: formatMetricsParam(span.from), task_to: formatMetricsParam(span.to) },
      { signal },
    );
    for (const campaign of response.campaigns) {
      const entry = found.get(campaign._id) ?? { campaign, tasks: new Map() };
      found.set(campaign._id, entry);
      for (const task of campaign.tasks) {
        const at = Date.parse(task.scheduled_at);
        if (at >= from && at < to) entry.tasks.set(task._id, task);
      }
    }
  }
  return [...found.values()]
    .filter((e) => e.tasks.size > 0)
    .map(({ campaign, tasks }) => ({
      id: campaign._id,
      name: campaign.name,
      rounds: [...tasks.values()].map((task) => windowRound(task, campaign, zone)),
    }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

function windowRound(task: MetricsTask, campaign: MetricsCampaign, zone: string): WindowRound {
  const local = DateTime.fromISO(task.scheduled_at, { zone: "utc" }).setZone(zone);
  const { deadline, expected } = roundReadiness(task, campaign);
  return {
    task_id: task._id,
    scheduled_at: local.toFormat("yyyy-MM-dd HH:mm:ss"),
    date: local.toISODate() as string,
    deadline,
    expected,
    sends: task.sent_count,
    // The metrics do not say which A/B groups a task has: all the spec names are counted.
    groups: campaign.is_ab_test ? EXPORT_AB_ROUNDS_PER_TASK : 1,
  };
}
