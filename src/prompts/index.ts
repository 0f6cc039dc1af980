import { completable, type GetPromptResult, type McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { ToolRuntime } from "../mcp/tool.js";
import { knownIds } from "./known-ids.js";

/**
 * A required prompt argument: its refusal (prompts/get, -32602) says what is missing and where
 * the value comes from, in place of zod's "expected string, received undefined".
 */
const required = (what: string) =>
  z.string({
    error: (issue) => (issue.input === undefined ? `required (${what})` : "must be text"),
  });

const date = (what: string) =>
  z
    .string({ error: "must be text" })
    .regex(/^\d{4}-\d{2}-\d{2}$/, "must be a date as YYYY-MM-DD")
    .optional()
    .describe(`${what} (YYYY-MM-DD, in the application's time zone)`);

function ask(text: string): GetPromptResult {
  return { messages: [{ role: "user", content: { type: "text", text } }] };
}

const range = (from: string | undefined, to: string | undefined, fallback: string) =>
  from === undefined && to === undefined
    ? fallback
    : `from ${from ?? "(30 days before to)"} to ${to ?? "(yesterday)"} (inclusive)`;

/**
 * The reports people ask for most, as MCP prompts: each is the plan of tool calls and the shape
 * of the answer, so that any client gets the same report. Campaign and scenario IDs complete from
 * what the server knows (see known-ids.ts).
 */
export function registerPrompts(server: McpServer, runtime: ToolRuntime): void {
  const ids = knownIds(runtime);
  const campaignId = completable(
    required("a campaign _id from campaign_metrics").describe(
      "campaign _id (from campaign_metrics)",
    ),
    (v) => ids.campaignIds(v ?? ""),
  );
  const scenarioId = completable(
    required("a scenario ID from the service console").describe("scenario ID"),
    (v) => ids.scenarioIds(v ?? ""),
  );

  server.registerPrompt(
    "weekly_campaign_report",
    {
      title: "Weekly campaign report",
      description:
        "Last week's campaigns ranked by revenue, with the delivery funnel and what changed.",
      argsSchema: z.object({
        week_start: date("first day of the week; default: Monday of last week"),
        tag: z.string().optional().describe("only campaigns with this tag"),
      }),
    },
    ({ week_start, tag }) =>
      ask(
        [
          `Write a weekly campaign report for ${week_start === undefined ? "last week (Monday to Sunday, KST)" : `the 7 days from ${week_start}`}${tag === undefined ? "" : ` for campaigns tagged "${tag}"`}.`,
          `1. Call campaign_metrics for that week${tag === undefined ? "" : ` with tag "${tag}"`}, sort_by "revenue", top_n 10; then the same for the week before, to compare.`,
          "2. For the top campaign, start_export its campaign_event_data for the week and summarize_export the job.",
          "3. Report: a table of the top campaigns (sent, received, open rate, purchases, revenue with its currency), totals against the week before (change in %), the top campaign's funnel per round and group, and three findings with the numbers behind them.",
          "Keep money per currency (never add KRW and USD), and say which figures are computed from sums.",
        ].join("\n"),
      ),
  );

  server.registerPrompt(
    "ab_test_readout",
    {
      title: "A/B test readout",
      description: "Which variant won a campaign's A/B test, by how much, and how sure we are.",
      argsSchema: z.object({
        campaign_id: campaignId,
        from: date("first day of the export"),
        to: date("last day of the export"),
      }),
    },
    ({ campaign_id, from, to }) =>
      ask(
        [
          `Read out the A/B test of campaign ${campaign_id}, ${range(from, to, "over its last 30 days")}.`,
          `1. start_export {"type": "campaign_event_data", "campaign_id": ${JSON.stringify(campaign_id)}${from === undefined ? "" : `, "from": "${from}"`}${to === undefined ? "" : `, "to": "${to}"`}} (check_export until it is downloaded).`,
          "2. summarize_export the job; use its A/B readout (groups, comparisons with confidence intervals) and the control group (대조군) figures.",
          "3. Answer: the winner on open rate and on conversion rate, the difference with its 95% interval, whether it is significant, the lift over the control group, and caveats (sample size, rounds with unsettled sends). Numbers first, one short paragraph of recommendation.",
        ].join("\n"),
      ),
  );

  server.registerPrompt(
    "delivery_failure_investigation",
    {
      title: "Delivery failure investigation",
      description: "Why a campaign's messages failed: error codes, channels, rounds and hours.",
      argsSchema: z.object({
        campaign_id: campaignId,
        from: date("first day"),
        to: date("last day"),
      }),
    },
    ({ campaign_id, from, to }) =>
      ask(
        [
          `Investigate delivery failures of campaign ${campaign_id}, ${range(from, to, "over its last 30 days")}.`,
          `1. start_export the campaign_event_data of ${campaign_id} for that range, then summarize_export the job with detail true.`,
          "2. From the summary: failures by error code and by channel, the rounds with the highest failure rate, and unsettled sends (sent but neither received nor failed).",
          "3. If a question remains (failure rate per hour, per user segment), ask it with query_export on the same job.",
          "4. Answer: the main causes ranked by messages lost, whether they cluster in a round, channel or hour, and what to fix first.",
        ].join("\n"),
      ),
  );

  server.registerPrompt(
    "scenario_health_check",
    {
      title: "Scenario health check",
      description: "Is an automated scenario flowing: sends, open rates and conversions per node.",
      argsSchema: z.object({
        scenario_id: scenarioId,
        from: date("first day"),
        to: date("last day"),
      }),
    },
    ({ scenario_id, from, to }) =>
      ask(
        [
          `Check the health of scenario ${scenario_id}, ${range(from, to, "over the last 30 days")}.`,
          `1. start_export {"type": "scenario_daily_metrics", "scenario_id": ${JSON.stringify(scenario_id)}${from === undefined ? "" : `, "from": "${from}"`}${to === undefined ? "" : `, "to": "${to}"`}} and summarize_export the job.`,
          "2. Per node: sends, open rate, conversions, and days without sends; branch A against B where the scenario branches; any mismatch the summary reports between summary and daily sheets.",
          "3. Answer: nodes that stopped or dropped (with the day it started), the branch that performs better, and what to look at next.",
        ].join("\n"),
      ),
  );
}
