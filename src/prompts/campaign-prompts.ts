import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import type { MetricsCampaign } from "../api/schemas.js";
import { callHint } from "../format.js";
import type { ToolRuntime } from "../mcp/tool.js";
import { campaignExportSteps, JOB_ID, summarizeStep } from "./campaign-export-steps.js";
import { type CampaignExportPlan, planCampaignExport } from "./export-plan.js";
import type { RecentCampaignsLookup } from "./recent-campaigns.js";

/** How long prompts/get waits for the service's rounds before writing the fallback steps. */
const LOOKUP_DEADLINE_MS = 10_000;

export interface CampaignPromptArgs {
  campaign_id: string;
  from?: string | undefined;
  to?: string | undefined;
}

/** What both campaign prompts start with: the campaign, its period and the steps to its data. */
async function opening(
  runtime: ToolRuntime,
  recent: RecentCampaignsLookup,
  args: CampaignPromptArgs,
) {
  const { campaign_id: campaignId, from, to } = args;
  if (from !== undefined && to !== undefined && from > to) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Invalid arguments: from (${from}) is after to (${to}); give the first day as from and the last as to.`,
    );
  }
  const known = await recent(LOOKUP_DEADLINE_MS);
  const now = runtime.now();
  const zone = runtime.config.timeZone;
  const plan = planCampaignExport({ campaignId, recent: known, now, zone, from, to });
  const campaign = known?.campaigns.find((c) => c._id === campaignId);
  return { campaign, span: exportSpan(plan), ...campaignExportSteps(plan, campaignId, now, zone) };
}

/** The first and last day the plan exports, when it names both. */
function exportSpan(plan: CampaignExportPlan): { from: string; to: string } | undefined {
  if (plan.kind === "export") {
    const first = plan.ranges[0];
    const last = plan.ranges.at(-1);
    return first === undefined || last === undefined
      ? undefined
      : { from: first.from, to: last.to };
  }
  if (plan.kind === "as_given" && plan.from !== undefined && plan.to !== undefined) {
    return { from: plan.from, to: plan.to };
  }
  return undefined;
}

function named(id: string, campaign: MetricsCampaign | undefined): string {
  return campaign === undefined
    ? `campaign ${id}`
    : `campaign ${id} (${JSON.stringify(campaign.name)})`;
}

function numbered(lines: string[]): string[] {
  return lines.map((line, i) => `${i + 1}. ${line}`);
}

export async function abTestReadoutText(
  runtime: ToolRuntime,
  recent: RecentCampaignsLookup,
  args: CampaignPromptArgs,
): Promise<string> {
  const o = await opening(runtime, recent, args);
  const notes = [...o.notes];
  if (o.campaign !== undefined && !o.campaign.is_ab_test) {
    notes.push(
      "campaign_metrics reports it is not an A/B test (is_ab_test false): there are no groups to compare; say so, and compare its rounds against each other instead.",
    );
  }
  const steps = o.exports
    ? [
        ...o.steps,
        summarizeStep(
          {},
          "use its A/B readout (groups, comparisons with confidence intervals) and the control group (대조군) figures; with several jobs, add the groups' counts across them and recompute the rates from the sums.",
        ),
        "Answer: the winner on open rate and on conversion rate, the difference with its 95% interval, whether it is significant, the lift over the control group, and caveats (sample size, rounds with unsettled sends). Numbers first, one short paragraph of recommendation.",
      ]
    : [
        ...o.steps,
        "Answer with what those figures show per round, say that the A/B readout (groups, intervals, control group) needs the export, and when it can be asked for.",
      ];
  return [
    `Read out the A/B test of ${named(args.campaign_id, o.campaign)}, ${o.period}.`,
    ...notes,
    ...numbered(steps),
  ].join("\n");
}

/** A query that runs on every campaign export: failures against sends per hour. */
const FAILURES_PER_HOUR =
  "SELECT date_trunc('hour', captured_at) AS hour, count(*) FILTER (WHERE event_role = 'sent') AS sent, count(*) FILTER (WHERE event_role = 'failed') AS failed FROM events WHERE event_role IN ('sent', 'failed') GROUP BY 1 ORDER BY 1";

export async function deliveryFailuresText(
  runtime: ToolRuntime,
  recent: RecentCampaignsLookup,
  args: CampaignPromptArgs,
): Promise<string> {
  const o = await opening(runtime, recent, args);
  const steps = o.exports
    ? [
        ...o.steps,
        summarizeStep(
          { detail: true },
          "from the summary: failures by error code and by channel, the rounds with the highest failure rate, and unsettled sends (sent but neither received nor failed).",
        ),
        `If a question remains (failure rate per hour, per user segment), ask it with query_export on the same job(s), e.g. ${callHint("query_export", { job_ids: [JOB_ID], sql: FAILURES_PER_HOUR })}.`,
        "Answer: the main causes ranked by messages lost, whether they cluster in a round, channel or hour, and what to fix first.",
      ]
    : [
        ...o.steps,
        "Answer with the sends and receipts those figures show per round (failures by error code need the export), and when the export can be asked for.",
      ];
  return [
    `Investigate delivery failures of ${named(args.campaign_id, o.campaign)}, ${o.period}.`,
    ...o.notes,
    ...numbered(steps),
  ].join("\n");
}

export async function campaignVsHistoryText(
  runtime: ToolRuntime,
  recent: RecentCampaignsLookup,
  args: CampaignPromptArgs,
): Promise<string> {
  const o = await opening(runtime, recent, args);
  const trend =
    o.span === undefined
      ? []
      : [
          `${callHint("campaign_metrics", { campaign_ids: [args.campaign_id], task_from: o.span.from, task_to: o.span.to, compare_to: "previous_period" })} for its change against the period of the same length just before (comparison.change).`,
        ];
  const steps = o.exports
    ? [
        ...o.steps,
        summarizeStep(
          {},
          "read its baseline: each rate (delivery, open, click, conversion, failure) against the median and p25-p75 of the last campaigns of its channel in the history, and the flag where it lies outside 1.5 IQR. With several jobs, use the baseline of the largest.",
        ),
        "If the summary says instead that the history holds too few campaigns of its channel, run the campaign_metrics call it names, export campaigns of that channel from its result with start_export (each downloaded file joins the history), and summarize this campaign again.",
        ...trend,
        "Answer: per rate, the campaign's value against its channel's median and quartiles (name the channel, how many campaigns and their dates), the rates flagged above or below, what may explain them, and the change against the period before where asked.",
      ]
    : [
        ...o.steps,
        "Answer with the live figures per round, say that the comparison with the channel's history needs the export, and when it can be asked for.",
      ];
  return [
    `Compare ${named(args.campaign_id, o.campaign)}, ${o.period}, with the team's own history of campaigns on the same channel.`,
    ...o.notes,
    ...numbered(steps),
  ].join("\n");
}
