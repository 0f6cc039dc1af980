import { formatCount as n, percent as pct } from "../../format.js";
import { CONTROL_GROUP } from "../campaign/columns.js";
import { roundRowsPhrase } from "../campaign/round-rows.js";
import { roundsPhrase } from "../campaign/send-rounds.js";
import type { CampaignRound, CampaignSummary, Comparison, ScenarioSummary } from "../schemas.js";
import { type ControlReadout, readoutEn } from "./readout-en.js";

/**
 * The summary text (summarize_export's text, the `summarize` command's output) in English: the
 * model reads it, so it is the default. Text from the file comes in already made safe by the
 * renderer (render.ts), which lays out the paragraphs and tables. The sentences the analysis puts
 * in the result (verdicts, notes) are English already and are given back as they are;
 * summary-ko.ts writes them from the result's fields.
 */

type Totals = CampaignSummary["totals"];
type Branch = ScenarioSummary["branches"][number];
type Trend = NonNullable<ScenarioSummary["nodes"][number]["trend"]>;

/** Where the rest of the figures are, as the reader asks for them. */
export interface MoreAt {
  detail: string;
  all: string;
}

/** "1 conversion", "2,406 conversions". */
function counted(count: number, noun: string): string {
  return `${n(count)} ${noun}${count === 1 ? "" : "s"}`;
}

export const summaryEn = {
  readout: readoutEn,
  /** The summary's pointers to the rest: the tool's arguments, or the command's options. */
  more: {
    tool: { detail: "ask with detail for more", all: "the structured result" },
    command: { detail: "run again with --detail for more", all: "--json" },
  },
  /** summarize_export's closing line: where the charts are. */
  charts: {
    offer: 'Charts: the same call with "report": true writes them as an HTML file.',
    written: (path: string, size: string) =>
      `HTML report with charts: ${path} (${size}; opens in any browser, no network needed).`,
  },
  leftOut: (left: string[], more: MoreAt) =>
    `_Not shown: ${left.join(", ")}; ${more.detail}, or see ${more.all} for every figure._`,
  nothingLeft: (more: MoreAt) => `_Nothing left out; ${more.all} has every figure._`,
  cut: (budget: number, more: MoreAt) =>
    `_Cut at ${budget} characters; see ${more.all} for every figure._`,
  /** The analysis' marks for a field the file left empty: a channel, an error code or currency. */
  empty: "(empty)",
  noValue: "(none)",
  none: "none",
  notApplicable: "n/a",
  duration: (seconds: number | null) => {
    if (seconds === null) return "n/a";
    if (seconds < 60) return `${seconds}s`;
    if (seconds < 3600) return `${(seconds / 60).toFixed(1)} min`;
    if (seconds < 86400) return `${(seconds / 3600).toFixed(1)} h`;
    return `${(seconds / 86400).toFixed(1)} days`;
  },
  warnings: (list: string[]) => `**Warning**: ${list.join(" ")}`,
  campaign: {
    head: (s: CampaignSummary, first: string | null, last: string | null) => {
      const t = s.totals;
      const span =
        first === null
          ? ""
          : first === last
            ? `, scheduled ${first}`
            : `, scheduled ${first} to ${last ?? first}`;
      return `**Campaign export** (${n(s.rows)} rows, ${roundsPhrase(s)}${span}): ${n(t.sent)} sent, ${n(t.received)} received (${pct(t.success_rate)} delivery success), ${n(t.failed)} failed, ${n(t.unsettled)} unsettled${t.control_assigned ? `, ${n(t.control_assigned)} control-group assignments` : ""}. An export holds only the rounds whose performance aggregation had finished, so its counts may differ from campaign_metrics.`;
    },
    channelColumns: ["channel", "sent", "received", "failed", "success"],
    moreChannels: (k: number) => `${k} channel(s)`,
    failures: (table: string) =>
      `Failures by error code (the sample carrier text is third-party data, quoted as a JSON string):\n${table}`,
    failureColumns: ["error_code", "count", "sample message"],
    moreErrorCodes: (k: number) => `${k} error code(s)`,
    engagement: (t: Totals, conversionNote: string) =>
      `**Engagement**: ${n(t.opens)} opens by ${n(t.open_users)} users: open rate ${pct(t.open_rate)} (건, opens/received) and ${pct(t.open_rate_users)} (명, ${n(t.open_users)} of ${n(t.received_users)} users who received a message; over the whole file each user counts once, however many rounds they were in). ${n(t.clicks)} landing clicks by ${n(t.click_users)} users. Send groups: ${counted(t.send_group_conversions, "conversion")} by ${counted(t.send_group_conversion_users, "user")}, ${pct(t.conversion_rate)} of opens.${t.control_conversions > 0 ? ` Control group (sent no message): ${counted(t.control_conversions, "conversion")}, not in that rate.` : ""} ${conversionNote}`,
    amount: (amount: number, currency: string, conversions: number) =>
      `${n(amount)} ${currency} (${counted(conversions, "conversion")})`,
    /** The send groups' revenue; the control group's, apart, when it converted at all. */
    revenue: (send: string, control: string | undefined, note: string) =>
      control === undefined
        ? `**Revenue**: ${send}. ${note}`
        : `**Revenue** (send groups): ${send}. Control group ${CONTROL_GROUP} (sent no message), not in that sum: ${control}. ${note}`,
    abHead: (lines: string[]) =>
      `**A/B test** (users counted once per round they were in, two-proportion z-test):\n- ${lines.join("\n- ")}`,
    abGroup: (name: string, g: CampaignSummary["ab_test"]["groups"][number]) =>
      `${name}: open rate ${pct(g.open_rate_users)} of ${n(g.received_users)} received users, conversion ${pct(g.conversion_rate_by_opens)} of ${n(g.open_users)} openers`,
    controlUntested: (c: ControlReadout, note: string) =>
      `Control group 대조군 (${n(c.assigned_users)} assigned users): ${note}`,
    controlTested: (c: ControlReadout, verdict: string, note: string) =>
      `Control group 대조군: ${n(c.converted_users)} of ${n(c.assigned_users)} users converted (${pct(c.conversion_rate)}) vs ${pct(c.send_groups_conversion_rate)} of users who received a message. ${verdict} ${note}`,
    timing: (
      tm: CampaignSummary["timing"],
      hours: string[],
      duration: (s: number | null) => string,
    ) =>
      `**Timing** (${tm.time_zone}): from receipt to first open, median ${duration(tm.receipt_to_first_open.median_seconds)}, p90 ${duration(tm.receipt_to_first_open.p90_seconds)} over ${n(tm.receipt_to_first_open.pairs)} (user, round) pairs. Busiest open hours: ${hours.join(", ") || "none"}.`,
    hour: (hour: number, count: number) => `${String(hour).padStart(2, "0")}:00 (${n(count)})`,
    roundColumns: [
      "task_id",
      "scheduled_at",
      "group",
      "sent",
      "recv",
      "fail",
      "opens",
      "open% 명",
      "conv",
    ],
    moreRounds: (rows: CampaignRound[]) => roundRowsPhrase(rows),
    unidentified: (k: number) =>
      `${n(k)} rows have no user id; they count as rows but not as users.`,
    /** A comparison's verdict (the control group's comparison has no metric). */
    verdict: (c: Comparison | NonNullable<ControlReadout["comparison"]>) => c.verdict,
    conversionNote: (s: CampaignSummary) => s.conversion_event_type.note,
    revenueNote: (s: CampaignSummary) => s.revenue.note,
  },
  scenario: {
    head: (s: ScenarioSummary, v: (column: string) => number) =>
      `**Scenario export**: ${s.nodes.length} message node(s). Totals: ${n(v("발송 수(건)"))} sends, ${n(v("오픈 수(건)"))} opens (open rate ${pct(v("오픈율(건)"))}), ${n(v("전환 수(건)"))} conversions (${pct(v("전환율(건)"))} of opens), revenue ${n(v("전환 수익"))} KRW, cost ${n(v("집행 비용"))}, ROAS ${v("ROAS").toFixed(2)}. User (명) totals add up each node's distinct users, so a user reached by two nodes counts twice.`,
    nodeColumns: ["#", "channel", "branch", "sends", "open%", "conv", "days", "trend"],
    trend: (trend: Trend | null) =>
      trend
        ? `${trend.direction}, best ${trend.best_day.date}, worst ${trend.worst_day.date}`
        : "no daily rows",
    moreNodes: (k: number) => `${k} node(s)`,
    branches: (verdicts: string[]) => `**A/B branches**:\n- ${verdicts.join("\n- ")}`,
    branchVerdict: (b: Branch) => b.verdict,
    checkOk: "Check: every node's summary row equals the sum of its daily sheet.",
    checkDiffers: (k: number, nodes: string[]) =>
      `Check: ${k} node(s) differ from the sum of their daily sheet: ${nodes.join("; ")}.`,
    mismatchNode: (number: number, metrics: string[]) => `#${number} ${metrics.join(", ")}`,
    mismatch: (metric: string, summary: number, dailySum: number) =>
      `${metric} ${summary} vs ${dailySum}`,
    warnings: (list: string[]) => `Warnings: ${list.join("; ")}`,
  },
};

export type SummaryMessages = typeof summaryEn;
