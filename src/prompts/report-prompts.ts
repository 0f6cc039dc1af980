import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { zoneLabel } from "../api/dates.js";
import { callHint } from "../format.js";
import type { ToolRuntime } from "../mcp/tool.js";
import { addDays, lastWeekMonday, today } from "./calendar.js";
import { summarizeStep } from "./campaign-export-steps.js";

/**
 * The weekly report: metrics of a week (KST, as the metrics endpoint reads dates) compared with
 * the week before in the same call (compare_to).
 */
export function weeklyReportText(
  runtime: ToolRuntime,
  args: { week_start?: string | undefined; tag?: string | undefined },
): string {
  const start = args.week_start ?? lastWeekMonday(runtime.now());
  const end = addDays(start, 6);
  const filter = args.tag === undefined ? {} : { tag: args.tag };
  const week = callHint("campaign_metrics", {
    task_from: start,
    task_to: end,
    sort_by: "revenue",
    top_n: 10,
    compare_to: "previous_period",
    ...filter,
  });
  const which = args.week_start === undefined ? "last week (Monday to Sunday)" : "the 7 days";
  return [
    `Write a weekly campaign report for ${which} from ${start} to ${end} (inclusive, KST)${args.tag === undefined ? "" : ` for campaigns tagged ${JSON.stringify(args.tag)}`}.`,
    `1. ${week}: that week, and in \`comparison\` the 7 days before (${addDays(start, -7)} to ${addDays(start, -1)}) with the change of every sum and rate.`,
    "2. Export the top campaign of that week: run the start_export call(s) the campaign_metrics result names in next_calls (one per range when the campaign is too large for one job); for each, if its result is not done, run the call its next_step names (check_export) until the file is downloaded.",
    `3. ${summarizeStep({}, "take its funnel per round and group, and its baseline against the channel's last campaigns where the summary gives one.")}`,
    "4. Report: a table of the top campaigns (sent, received, open rate, purchases, revenue with its currency, and each campaign's change where it ran the week before too), totals against the week before from comparison.change (change in %, with its sign), the top campaign's funnel per round and group, and three findings with the numbers behind them.",
    "Keep money per currency (never add KRW and USD), and say which figures are computed from sums.",
  ].join("\n");
}

/** Days a scenario prompt reads without dates: the last 30 complete days. */
const SCENARIO_DAYS = 30;

/**
 * Scenario exports need both dates (spec 4.2): missing ones are filled from the server's clock,
 * up to yesterday (today is not over) and 30 days long.
 */
export function scenarioHealthText(
  runtime: ToolRuntime,
  args: { scenario_id: string; from?: string | undefined; to?: string | undefined },
): string {
  const zone = runtime.config.timeZone;
  const yesterday = addDays(today(runtime.now(), zone), -1);
  const to = args.to ?? (args.from !== undefined && args.from > yesterday ? args.from : yesterday);
  const from = args.from ?? addDays(to, -(SCENARIO_DAYS - 1));
  if (from > to) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Invalid arguments: from (${from}) is after to (${to}); give the first day as from and the last as to.`,
    );
  }
  const filled =
    args.from === undefined && args.to === undefined
      ? ` (the last ${SCENARIO_DAYS} days up to yesterday)`
      : args.from === undefined
        ? ` (${SCENARIO_DAYS} days up to the given end)`
        : args.to === undefined
          ? " (from the given day up to yesterday)"
          : "";
  const exportCall = callHint("start_export", {
    type: "scenario_daily_metrics",
    scenario_id: args.scenario_id,
    from,
    to,
  });
  return [
    `Check the health of scenario ${args.scenario_id}, from ${from} to ${to} (inclusive, ${zoneLabel(zone)})${filled}.`,
    `1. ${exportCall}; if its result is not done, run the call its next_step names (check_export) until the file is downloaded.`,
    `2. ${summarizeStep({}, "it gives every message node's totals, the daily trend and the sheet checks.")}`,
    "3. Per node: sends, open rate, conversions, and days without sends; branch A against B where the scenario branches; any mismatch the summary reports between summary and daily sheets.",
    "4. Answer: nodes that stopped or dropped (with the day it started), the branch that performs better, and what to look at next.",
  ].join("\n");
}
