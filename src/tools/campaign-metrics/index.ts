import {
  describeWindowKst,
  formatMetricsParam,
  KST,
  type MetricsWindow,
  wallClockMinute,
  windowToExportDates,
  windowToUtc,
} from "../../api/dates.js";
import { exportRangesUnderLimit } from "../../api/export-ranges.js";
import { MAX_METRICS_WINDOW_DAYS } from "../../api/limits.js";
import type { MetricsCampaign } from "../../api/schemas.js";
import { metricsVsExport } from "../../exports/metrics-vs-export.js";
import { describeCalls, formatNumber, money, type NextCall, nextCall } from "../../format.js";
import { checkInteger } from "../../mcp/params.js";
import { defineTool } from "../../mcp/tool.js";
import { REPORT_VIEW_URI } from "../../resources/report-view.js";
import { compareWith } from "./compare.js";
import { comparisonLines } from "./comparison-text.js";
import { fetchWindows } from "./fetch.js";
import {
  DEFAULT_TOP_N,
  inputSchema,
  MAX_TASKS_LISTED,
  MAX_TOP_N,
  outputSchema,
  type TaskOut,
} from "./schemas.js";
import { renderText } from "./text.js";
import {
  aggregatingIn,
  matches,
  sortCampaigns,
  sumAll,
  summarizeCampaign,
  taskRow,
} from "./totals.js";
import { checkWindowLength, describePeriod, resolveWindow, shortPeriod } from "./window.js";

/**
 * The campaign_metrics tool: its handler ties the window (window.ts), the requests (fetch.ts),
 * the sums (totals.ts), the comparison with compare_to (compare.ts) and the text (text.ts)
 * together, and picks the next step.
 */

export default defineTool({
  name: "campaign_metrics",
  title: "Campaign metrics",
  description: `Campaigns with rounds in a window, ranked; sends, opens, clicks, purchases, revenue and cost (per currency) summed. Use first: find a campaign (its _id feeds start_export), report on a period, compare it with another.
Returns top campaigns, totals over all matches, rates from sums (computed_*). Dates in KST; over ${MAX_METRICS_WINDOW_DAYS} days split and merged.
Example: campaign_metrics {"task_from": "2026-10-01", "task_to": "2026-10-31", "compare_to": "previous_period"}`,
  inputSchema,
  outputSchema,
  appView: REPORT_VIEW_URI,
  annotations: { readOnlyHint: true, openWorldHint: true },
  async handler(args, runtime, call) {
    checkInteger(args.top_n, "top_n", 1, MAX_TOP_N);
    const window = resolveWindow(args.task_from, args.task_to, runtime.now());
    checkWindowLength(window, runtime.now());
    // One bound for all of the call's requests, from now: each request also has its own timeout.
    const seconds = runtime.config.metricsCallSeconds;
    const bound = { deadline: Date.now() + seconds * 1000, seconds };
    const api = await runtime.api();
    const { spans, campaigns, other } = await fetchWindows(
      api,
      window,
      args.compare_to,
      args.campaign_schedule_type,
      call,
      bound,
    );

    const filtered = campaigns.filter((c) => matches(c, args));
    const now = runtime.now();
    const aggregating = aggregatingIn(campaigns, now);
    const summarized = filtered.map((c) => summarizeCampaign(c, aggregating));
    sortCampaigns(summarized, args.sort_by ?? "sent");
    const topN = args.top_n ?? DEFAULT_TOP_N;
    const totals = sumAll(filtered, aggregating);
    const compared =
      other === undefined
        ? undefined
        : { other, ...compareWith({ other, args, now, totals, shown: summarized.slice(0, topN) }) };
    const shown = compared?.campaigns ?? summarized.slice(0, topN);
    const kst = describeWindowKst(window);
    const period = describePeriod(window);

    let tasks: TaskOut[] | undefined;
    let tasksNotShown: number | undefined;
    if (args.include_tasks === true) {
      const shownIds = new Set(shown.map((c) => c._id));
      // Newest first: when the cap cuts, the recent rounds (the ones asked about) stay.
      const all = filtered
        .filter((c) => shownIds.has(c._id))
        .flatMap((c) => c.tasks)
        .sort((a, b) => Date.parse(b.scheduled_at) - Date.parse(a.scheduled_at));
      tasks = all.slice(0, MAX_TASKS_LISTED).map((t) => taskRow(t, aggregating(t)));
      tasksNotShown = all.length - tasks.length;
    }

    const filters: Record<string, unknown> = {};
    for (const key of ["campaign_schedule_type", "campaign_ids", "tag", "name_contains"] as const) {
      if (args[key] !== undefined) filters[key] = args[key];
    }
    const summary = `${filtered.length} campaign(s) with rounds in ${period}; ${formatNumber(totals.sent_count)} sent, ${formatNumber(totals.open_count)} opens, ${formatNumber(totals.purchase_count)} purchases, revenue ${money(totals.revenue)}.`;
    const top = shown[0];
    const topCampaign = top === undefined ? undefined : filtered.find((c) => c._id === top._id);
    const split =
      topCampaign === undefined ? undefined : exportSplit(topCampaign, runtime.config.timeZone);
    const nextCalls =
      top === undefined
        ? [emptyNextCall(window, filters)]
        : split !== undefined
          ? split.calls
          : [
              nextCall("start_export", {
                type: "campaign_event_data",
                campaign_id: top._id,
                ...windowToExportDates(window, runtime.config.timeZone),
              }),
            ];
    const nextStep = top === undefined ? emptyNextStep(window, filters) : describeCalls(nextCalls);
    const firstAggregating = filtered
      .flatMap((c) => c.tasks.filter(aggregating))
      .map((t) => wallClockMinute(t.scheduled_at, KST))
      .sort()[0];
    const vsExport = metricsVsExport({
      window,
      zone: runtime.config.timeZone,
      revenueCurrencies: Object.keys(totals.revenue),
      aggregating: totals.rounds_aggregating,
      firstAggregating: firstAggregating === undefined ? undefined : `${firstAggregating} KST`,
    });
    return {
      structured: {
        summary,
        next_step: nextStep,
        next_calls: nextCalls,
        window: {
          kst,
          task_from: formatMetricsParam(window.from),
          task_to: formatMetricsParam(window.to),
          utc: windowToUtc(window),
          requests: spans.length,
        },
        vs_export: vsExport,
        filters,
        matched_campaigns: filtered.length,
        campaigns: shown,
        more_not_shown: summarized.length - shown.length,
        totals,
        ...(tasks === undefined ? {} : { tasks, tasks_not_shown: tasksNotShown }),
        ...(compared === undefined ? {} : { comparison: compared.comparison }),
      },
      text: renderText({
        summary,
        comparison:
          compared === undefined
            ? []
            : comparisonLines(
                compared.comparison,
                shortPeriod(compared.other.window),
                shown.filter((c) => c.previous !== undefined).length,
                shown.length,
                Object.keys(filters).length > 0,
              ),
        nextStep,
        requests: spans.length,
        shown,
        total: summarized.length,
        totals,
        tasks,
        tasksNotShown,
        split: split?.reason,
        zone: runtime.config.timeZone,
        vsExport,
      }),
    };
  },
});

/** Nothing matched: drop the filters if there are any, else look further back. */
function emptyNextCall(window: MetricsWindow, filters: Record<string, unknown>): NextCall {
  const to = formatMetricsParam(window.to);
  if (Object.keys(filters).length > 0) {
    return nextCall("campaign_metrics", {
      task_from: formatMetricsParam(window.from),
      task_to: to,
    });
  }
  return nextCall("campaign_metrics", {
    task_from: formatMetricsParam(window.from.minus({ days: 90 })),
    task_to: to,
  });
}

function emptyNextStep(window: MetricsWindow, filters: Record<string, unknown>): string {
  const why =
    Object.keys(filters).length > 0 ? "the same window without filters" : "a window 90 days longer";
  return `${describeCalls([emptyNextCall(window, filters)])} (${why})`;
}

/**
 * The top campaign's export as several start_export calls, when one would exceed the service's
 * limit; undefined when one call does.
 */
export function exportSplit(
  campaign: MetricsCampaign,
  zone: string,
): { calls: NextCall[]; reason: string } | undefined {
  const plan = exportRangesUnderLimit(campaign, zone);
  if (plan === undefined) return undefined;
  return {
    calls: plan.ranges.map((r) =>
      nextCall("start_export", {
        type: "campaign_event_data",
        campaign_id: campaign._id,
        from: r.from,
        to: r.to,
      }),
    ),
    reason: `the top campaign is too large for one export in this window (${plan.over}), so export it in ${plan.ranges.length} date ranges (one job each)`,
  };
}
