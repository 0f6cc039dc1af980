import type { MetricsWindow } from "../../api/dates.js";
import { formatMetricsParam, splitMetricsWindow } from "../../api/dates.js";
import { ApiError } from "../../api/errors.js";
import { MAX_METRICS_WINDOW_DAYS } from "../../api/limits.js";
import type { MetricsCampaign, MetricsTask } from "../../api/schemas.js";
import type { CrmApi } from "../../api/types.js";
import { callHint } from "../../format.js";
import type { ToolCall } from "../../mcp/tool.js";
import { CallDeadlineError } from "../../mcp/tool-errors.js";
import { type CompareTo, comparisonWindow } from "./compare-window.js";
import type { CampaignMetricsArgs } from "./schemas.js";

type ScheduleType = CampaignMetricsArgs["campaign_schedule_type"];
type Bound = { deadline: number; seconds: number };

/** The window compare_to names, with what the service returned for it. */
export interface OtherWindow {
  compareTo: CompareTo;
  window: MetricsWindow;
  requests: number;
  campaigns: MetricsCampaign[];
}

export interface FetchedWindows {
  /** The asked window's requests. */
  spans: MetricsWindow[];
  campaigns: MetricsCampaign[];
  other: OtherWindow | undefined;
}

/**
 * The asked window's campaigns and, with compare_to, the other window's: each window split and
 * merged on its own (never one request across both), all under the call's one bound.
 */
export async function fetchWindows(
  api: CrmApi,
  window: MetricsWindow,
  compareTo: CompareTo | undefined,
  scheduleType: ScheduleType,
  call: ToolCall,
  bound: Bound,
): Promise<FetchedWindows> {
  const spans = splitMetricsWindow(window);
  const other =
    compareTo === undefined
      ? undefined
      : { compareTo, window: comparisonWindow(window, compareTo) };
  const otherSpans = other === undefined ? [] : splitMetricsWindow(other.window);
  const total = spans.length + otherSpans.length;
  const campaigns = await fetchCampaigns(api, spans, scheduleType, call, bound, {
    asked: window,
    before: 0,
    total,
  });
  if (other === undefined) return { spans, campaigns, other: undefined };
  const plan = { asked: window, before: spans.length, total };
  const others = await fetchCampaigns(api, otherSpans, scheduleType, call, bound, plan);
  return {
    spans,
    campaigns,
    other: { ...other, requests: otherSpans.length, campaigns: others },
  };
}

/** Where one window's requests stand in the whole call (a compared window adds its own). */
interface RequestPlan {
  /** The window asked for: a deadline's advice names a shorter one ending where it ends. */
  asked: MetricsWindow;
  /** Requests of the call before this window's, and in all. */
  before: number;
  total: number;
}

/**
 * The campaigns with rounds in the window, one request per span of at most the service's
 * MAX_METRICS_WINDOW_DAYS (spec 4.4), merged by campaign: each round counted once, and only rounds scheduled in the
 * span that asked for them.
 */
async function fetchCampaigns(
  api: CrmApi,
  spans: readonly MetricsWindow[],
  scheduleType: ScheduleType,
  call: ToolCall,
  bound: Bound,
  plan: RequestPlan,
): Promise<MetricsCampaign[]> {
  const campaigns = new Map<string, MetricsCampaign>();
  const taskIds = new Map<string, Set<string>>();
  for (const [index, span] of spans.entries()) {
    const number = plan.before + index;
    if (plan.total > 1) {
      await call.progress(
        number,
        `Campaign metrics: request ${number + 1} of ${plan.total} (${formatMetricsParam(span.from)} to ${formatMetricsParam(span.to)})`,
        plan.total,
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
          throw deadlineError(plan, number, bound.seconds);
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
 * The call's bound ran out at request `index` (of the whole call): how far it got, and the two
 * ways on, retrying (the service was slow) or a shorter window (fewer and smaller requests).
 */
function deadlineError(plan: RequestPlan, index: number, seconds: number): CallDeadlineError {
  const { asked } = plan;
  const days = asked.to.diff(asked.from, "days").days;
  // Half the window, at most one request's worth, ending where the window ends.
  const shorterDays = Math.min(MAX_METRICS_WINDOW_DAYS, Math.max(1, Math.floor(days / 2)));
  const shorter = callHint("campaign_metrics", {
    task_from: formatMetricsParam(asked.to.minus({ days: shorterDays })),
    task_to: formatMetricsParam(asked.to),
  });
  const takes =
    plan.total > splitMetricsWindow(asked).length
      ? "this window and the one it is compared with take"
      : "this window takes";
  const progress =
    plan.total > 1
      ? `the service had answered ${index} of the ${plan.total} requests ${takes} (one per ${MAX_METRICS_WINDOW_DAYS} days)`
      : "the service had not answered its request";
  return new CallDeadlineError(
    `campaign_metrics stopped after ${seconds} s, its bound for all of a call's requests (CRM_METRICS_CALL_SECONDS): ${progress}. Nothing is wrong with the input; the service answered slowly. Retry shortly, or ask for a shorter window, e.g. ${shorter}.`,
  );
}
