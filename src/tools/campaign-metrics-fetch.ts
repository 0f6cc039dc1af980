import type { MetricsWindow } from "../api/dates.js";
import { formatMetricsParam } from "../api/dates.js";
import type { MetricsCampaign, MetricsTask } from "../api/schemas.js";
import type { CrmApi } from "../api/types.js";
import type { CampaignMetricsArgs } from "./campaign-metrics-schemas.js";
import type { ToolCall } from "./tool.js";

/**
 * The campaigns with rounds in the window, one request per span of at most the service's 180
 * days (spec 4.4), merged by campaign: each round counted once, and only rounds scheduled in the
 * span that asked for them.
 */
export async function fetchCampaigns(
  api: CrmApi,
  spans: readonly MetricsWindow[],
  scheduleType: CampaignMetricsArgs["campaign_schedule_type"],
  call: ToolCall,
  deadline: number,
): Promise<MetricsCampaign[]> {
  const campaigns = new Map<string, MetricsCampaign>();
  const taskIds = new Map<string, Set<string>>();
  for (const [index, span] of spans.entries()) {
    if (spans.length > 1) {
      await call.progress(
        index,
        `Campaign metrics: request ${index + 1} of ${spans.length} (${formatMetricsParam(span.from)} to ${formatMetricsParam(span.to)})`,
        spans.length,
      );
    }
    const response = await api.campaignMetrics(
      {
        task_from: formatMetricsParam(span.from),
        task_to: formatMetricsParam(span.to),
        ...(scheduleType === undefined ? {} : { campaign_schedule_type: scheduleType }),
      },
      { signal: call.signal, deadline },
    );
    // Spec 4.4 only says which campaigns are included, not that their tasks are limited to
    // the window: keep the rounds scheduled in this span, so sums cover the window asked for.
    const spanFrom = span.from.toMillis();
    const spanTo = span.to.toMillis();
    const inSpan = (t: MetricsTask) => {
      const at = Date.parse(t.scheduled_at);
      return at >= spanFrom && at < spanTo;
    };
    for (const campaign of response.campaigns) {
      const existing = campaigns.get(campaign._id);
      const seen = taskIds.get(campaign._id) ?? new Set<string>();
      taskIds.set(campaign._id, seen);
      const fresh = campaign.tasks.filter((t) => inSpan(t) && !seen.has(t._id));
      for (const t of fresh) seen.add(t._id);
      if (existing === undefined) campaigns.set(campaign._id, { ...campaign, tasks: fresh });
      else existing.tasks.push(...fresh);
    }
  }
  return [...campaigns.values()];
}
