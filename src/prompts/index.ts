import { completable, type GetPromptResult, type McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { ToolRuntime } from "../mcp/tool.js";
import {
  abTestReadoutText,
  campaignVsHistoryText,
  deliveryFailuresText,
} from "./campaign-prompts.js";
import { knownIds } from "./known-ids.js";
import { recentCampaignsLookup } from "./recent-campaigns.js";
import { scenarioHealthText, weeklyReportText } from "./report-prompts.js";

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

/** What the campaign prompts read without dates (export-plan.ts). */
const CAMPAIGN_DEFAULT = "the 30 days up to the campaign's latest aggregated round";

function ask(text: string): GetPromptResult {
  return { messages: [{ role: "user", content: { type: "text", text } }] };
}

/**
 * The reports people ask for most, as MCP prompts: each is the plan of tool calls and the shape
 * of the answer, so that any client gets the same report. Every call a prompt names carries
 * arguments that run as written: dates are computed when the prompt is read, from the server's
 * clock and the campaign's rounds (export-plan.ts). Campaign and scenario IDs complete from what
 * the server knows (see known-ids.ts).
 */
export function registerPrompts(server: McpServer, runtime: ToolRuntime): void {
  const recent = recentCampaignsLookup(runtime);
  const ids = knownIds(runtime, recent);
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
        week_start: date("first day of the 7 days; default: Monday of last week"),
        tag: z.string().optional().describe("only campaigns with this tag"),
      }),
    },
    ({ week_start, tag }) => ask(weeklyReportText(runtime, { week_start, tag })),
  );

  server.registerPrompt(
    "ab_test_readout",
    {
      title: "A/B test readout",
      description: "Which variant won a campaign's A/B test, by how much, and how sure we are.",
      argsSchema: z.object({
        campaign_id: campaignId,
        from: date(`first day; default: ${CAMPAIGN_DEFAULT}`),
        to: date("last day"),
      }),
    },
    async ({ campaign_id, from, to }) =>
      ask(await abTestReadoutText(runtime, recent, { campaign_id, from, to })),
  );

  server.registerPrompt(
    "delivery_failure_investigation",
    {
      title: "Delivery failure investigation",
      description: "Why a campaign's messages failed: error codes, channels, rounds and hours.",
      argsSchema: z.object({
        campaign_id: campaignId,
        from: date(`first day; default: ${CAMPAIGN_DEFAULT}`),
        to: date("last day"),
      }),
    },
    async ({ campaign_id, from, to }) =>
      ask(await deliveryFailuresText(runtime, recent, { campaign_id, from, to })),
  );

  server.registerPrompt(
    "campaign_vs_history",
    {
      title: "Campaign against its channel's history",
      description:
        "Whether a campaign's rates are usual for its channel: against the team's last campaigns there.",
      argsSchema: z.object({
        campaign_id: campaignId,
        from: date(`first day; default: ${CAMPAIGN_DEFAULT}`),
        to: date("last day"),
      }),
    },
    async ({ campaign_id, from, to }) =>
      ask(await campaignVsHistoryText(runtime, recent, { campaign_id, from, to })),
  );

  server.registerPrompt(
    "scenario_health_check",
    {
      title: "Scenario health check",
      description: "Is an automated scenario flowing: sends, open rates and conversions per node.",
      argsSchema: z.object({
        scenario_id: scenarioId,
        from: date("first day; default: 30 days before to"),
        to: date("last day; default: yesterday"),
      }),
    },
    ({ scenario_id, from, to }) => ask(scenarioHealthText(runtime, { scenario_id, from, to })),
  );
}
