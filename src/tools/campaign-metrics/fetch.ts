import type { MetricsWindow } from "../../api/dates.js";
import { formatMetricsParam } from "../../api/dates.js";
import { ApiError } from "../../api/errors.js";
import { MAX_METRICS_WINDOW_DAYS } from "../../api/limits.js";
import type { MetricsCampaign, MetricsTask } from "../../api/schemas.js";
import type { CrmApi } from "../../api/types.js";
import { callHint } from "../../format.js";
import type { ToolCall } from "../../mcp/tool.js";
import { CallDeadlineError } from "../../mcp/tool-errors.js";
import type { CampaignMetricsArgs } from "./schemas.js";

/**
 * The campaigns with rounds in the window, one request per span of at most the service's
 * MAX_METRICS_WINDOW_DAYS (spec 4.4), merged by campaign: each round counted once, and only rounds scheduled in the
 * span that asked for them.
 */
export async function fetchCampaigns(
  api: CrmApi,
  spans: readonly MetricsWindow[],
  scheduleType: CampaignMetricsArgs["campaign_schedule_type"],
  call: ToolCall,
  bound: { deadline: number; seconds: number },
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
    const response = await api
      .campaignMetrics(
        {
          task_from: formatMetricsParam(span.from),
          task_to: formatMetricsParam(span.to),
          ...(scheduleType === undefined ? {} : { campaign_schedule_type: scheduleType }),
        },
        { signal: call.signal, deadline: bound.deadline },
      )
      .catch((error: unknown) => {
        if (error instanceof ApiError && error.kind === "timeout" && Date.now() >= bound.deadline) {
          throw deadlineError(spans, index, bound.seconds);
        }
        throw error;
      });
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

/**
 * The call's bound ran out at request `index`: how far it got, and the two ways on, retrying
 * (the service was slow) or a shorter window (fewer and smaller requests).
 */
function deadlineError(
  spans: readonly MetricsWindow[],
  index: number,
  seconds: number,
): CallDeadlineError {
  const first = spans[0] as MetricsWindow;
  const last = spans[spans.length - 1] as MetricsWindow;
  const days = last.to.diff(first.from, "days").days;
  // Half the window, at most one request's worth, ending where the window ends.
  const shorterDays = Math.min(MAX_METRICS_WINDOW_DAYS, Math.max(1, Math.floor(days / 2)));
  const shorter = callHint("campaign_metrics", {
    task_from: formatMetricsParam(last.to.minus({ days: shorterDays })),
    task_to: formatMetricsParam(last.to),
  });
  const progress =
    spans.length > 1
      ? `the service had answered ${index} of the ${spans.length} requests this window takes (one per ${MAX_METRICS_WINDOW_DAYS} days)`
      : "the service had not answered its request";
  return new CallDeadlineError(
    `campaign_metrics stopped after ${seconds} s, its bound for all of a call's requests (CRM_METRICS_CALL_SECONDS): ${progress}. Nothing is wrong with the input; the service answered slowly. Retry shortly, or ask for a shorter window, e.g. ${shorter}.`,
  );
}
