import { markdownText, formatCount as n, percent as pct, table } from "../format.js";
import { CONTROL_GROUP } from "./campaign-columns.js";
import { roundRowsPhrase } from "./round-rows.js";
import { safeText } from "./safe-text.js";
import type { CampaignSummary, ScenarioSummary, SummaryResult } from "./schemas.js";
import { roundsPhrase } from "./send-rounds.js";

/**
 * Markdown for a model or a person: a few short paragraphs and compact tables, under 4,000
 * characters unless `detail` is asked for, with a line saying what was left out.
 */

const DEFAULT_BUDGET = 4000;

export interface RenderOptions {
  detail?: boolean;
  /**
   * Who reads the text, so that its pointers to the rest are true: the model through
   * summarize_export (the `detail` argument, the structured result) or a person who ran the
   * `summarize` command (--detail, --json). Default: the tool.
   */
  reader?: "tool" | "command";
}

/** Where the rest of the figures are, as the reader asks for them. */
interface MoreAt {
  detail: string;
  all: string;
}

const MORE_AT: Record<NonNullable<RenderOptions["reader"]>, MoreAt> = {
  tool: { detail: "ask with detail for more", all: "the structured result" },
  command: { detail: "run again with --detail for more", all: "--json" },
};

function leftOutLine(left: string[], more: MoreAt): string {
  return left.length > 0
    ? `_Not shown: ${left.join(", ")}; ${more.detail}, or see ${more.all} for every figure._`
    : `_Nothing left out; ${more.all} has every figure._`;
}

/** Table cell text from the file: unsafe characters out (table() escapes the markup). */
function cell(text: string): string {
  return safeText(text) || "(empty)";
}

/** File text written outside a table: made safe and markup escaped. */
function inline(text: string): string {
  return markdownText(cell(text));
}

/** Prose that holds file text (already made safe when the result was built): markup escaped. */
function md(text: string): string {
  return markdownText(text);
}

/** "1 conversion", "2,406 conversions". */
function counted(count: number, noun: string): string {
  return `${n(count)} ${noun}${count === 1 ? "" : "s"}`;
}

function duration(seconds: number | null): string {
  if (seconds === null) return "n/a";
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${(seconds / 60).toFixed(1)} min`;
  if (seconds < 86400) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86400).toFixed(1)} days`;
}

interface Limits {
  rounds: number;
  failures: number;
  channels: number;
  nodes: number;
}

function campaignMarkdown(s: CampaignSummary, lim: Limits, more: MoreAt): string {
  const t = s.totals;
  const out: string[] = [];
  const left: string[] = [];
  const { first_scheduled_at: first, last_scheduled_at: last } = s.schedule;
  const span =
    first === null
      ? ""
      : first === last
        ? `, scheduled ${cell(first)}`
        : `, scheduled ${cell(first)} to ${cell(last ?? first)}`;
  out.push(
    `**Campaign export** (${n(s.rows)} rows, ${roundsPhrase(s)}${span}): ${n(t.sent)} sent, ${n(t.received)} received (${pct(t.success_rate)} delivery success), ${n(t.failed)} failed, ${n(t.unsettled)} unsettled${t.control_assigned ? `, ${n(t.control_assigned)} control-group assignments` : ""}. An export holds only the rounds whose performance aggregation had finished, so its counts may differ from campaign_metrics.`,
  );
  const channels = s.delivery.by_channel.slice(0, lim.channels);
  if (channels.length > 1 || (channels[0] && channels[0].failed > 0)) {
    out.push(
      table(
        ["channel", "sent", "received", "failed", "success"],
        channels.map((c) => [
          cell(c.channel),
          n(c.sent),
          n(c.received),
          n(c.failed),
          pct(c.success_rate),
        ]),
        { padded: true },
      ),
    );
  }
  if (s.delivery.by_channel.length > channels.length) {
    left.push(`${s.delivery.by_channel.length - channels.length} channel(s)`);
  }
  if (s.failures.length > 0) {
    const shown = s.failures.slice(0, lim.failures);
    out.push(
      `Failures by error code (the sample carrier text is third-party data, quoted as a JSON string):\n${table(
        ["error_code", "count", "sample message"],
        // JSON quoting escapes the sample's own quotes, so where it starts and ends is never in doubt.
        shown.map((f) => [cell(f.error_code), n(f.count), JSON.stringify(f.sample_message)]),
        { padded: true },
      )}`,
    );
    if (s.failures.length > shown.length)
      left.push(`${s.failures.length - shown.length} error code(s)`);
  }
  out.push(
    `**Engagement**: ${n(t.opens)} opens by ${n(t.open_users)} users: open rate ${pct(t.open_rate)} (건, opens/received) and ${pct(t.open_rate_users)} (명, ${n(t.open_users)} of ${n(t.received_users)} users who received a message; over the whole file each user counts once, however many rounds they were in). ${n(t.clicks)} landing clicks by ${n(t.click_users)} users. Send groups: ${counted(t.send_group_conversions, "conversion")} by ${counted(t.send_group_conversion_users, "user")}, ${pct(t.conversion_rate)} of opens.${t.control_conversions > 0 ? ` Control group (sent no message): ${counted(t.control_conversions, "conversion")}, not in that rate.` : ""} ${md(s.conversion_event_type.note)}`,
  );
  const money = (sums: CampaignSummary["revenue"]["by_currency"]): string =>
    sums
      .map((c) => `${n(c.amount)} ${inline(c.currency)} (${counted(c.conversions, "conversion")})`)
      .join(", ") || "none";
  // The headline is the send groups' revenue; the control group got no message, so its revenue
  // is no result of the campaign and is given apart.
  const control = s.revenue.control_by_currency;
  out.push(
    t.control_conversions > 0
      ? `**Revenue** (send groups): ${money(s.revenue.send_group_by_currency)}. Control group ${CONTROL_GROUP} (sent no message), not in that sum: ${money(control)}. ${s.revenue.note}`
      : `**Revenue**: ${money(s.revenue.send_group_by_currency)}. ${s.revenue.note}`,
  );
  const ab = s.ab_test;
  if (ab.groups.length > 0) {
    const lines = ab.groups.map(
      (g) =>
        `${inline(g.group)}: open rate ${pct(g.open_rate_users)} of ${n(g.received_users)} received users, conversion ${pct(g.conversion_rate_by_opens)} of ${n(g.open_users)} openers`,
    );
    const verdicts = ab.comparisons.map((c) => md(c.verdict));
    const control = ab.control
      ? [
          ab.control.comparison === null
            ? `Control group 대조군 (${n(ab.control.assigned_users)} assigned users): ${md(ab.control.note)}`
            : `Control group 대조군: ${n(ab.control.converted_users)} of ${n(ab.control.assigned_users)} users converted (${pct(ab.control.conversion_rate)}) vs ${pct(ab.control.send_groups_conversion_rate)} of users who received a message. ${md(ab.control.comparison.verdict)} ${md(ab.control.note)}`,
        ]
      : [];
    out.push(
      `**A/B test** (users counted once per round they were in, two-proportion z-test):\n- ${[...lines, ...verdicts, ...control].join("\n- ")}`,
    );
  }
  const tm = s.timing;
  const hours = tm.opens_by_hour
    .map((count, hour) => ({ count, hour }))
    .filter((h) => h.count > 0)
    .sort((a, b) => b.count - a.count)
    .slice(0, 3)
    .map((h) => `${String(h.hour).padStart(2, "0")}:00 (${n(h.count)})`);
  out.push(
    `**Timing** (${tm.time_zone}): from receipt to first open, median ${duration(tm.receipt_to_first_open.median_seconds)}, p90 ${duration(tm.receipt_to_first_open.p90_seconds)} over ${n(tm.receipt_to_first_open.pairs)} (user, round) pairs. Busiest open hours: ${hours.join(", ") || "none"}.`,
  );
  const rounds = s.rounds.slice(0, lim.rounds);
  if (rounds.length > 0) {
    out.push(
      table(
        ["task_id", "scheduled_at", "group", "sent", "recv", "fail", "opens", "open% 명", "conv"],
        rounds.map((r) => [
          cell(r.task_id),
          cell(r.scheduled_at),
          cell(r.group),
          n(r.sent),
          n(r.received),
          n(r.failed),
          n(r.opens),
          // A control round sends nothing, so it has no open rate (0% would read as a result).
          r.group === CONTROL_GROUP ? "n/a" : pct(r.open_rate_users),
          n(r.conversions),
        ]),
        { padded: true },
      ),
    );
  }
  if (s.rounds.length > rounds.length) left.push(roundRowsPhrase(s.rounds.slice(rounds.length)));
  if (s.warnings.length > 0) out.unshift(`**Warning**: ${s.warnings.map(md).join(" ")}`);
  if (s.unidentified_rows > 0) {
    out.push(
      `${n(s.unidentified_rows)} rows have no user id; they count as rows but not as users.`,
    );
  }
  out.push(leftOutLine(left, more));
  return out.join("\n\n");
}

function scenarioMarkdown(s: ScenarioSummary, lim: Limits, more: MoreAt): string {
  const out: string[] = [];
  const left: string[] = [];
  const tot = s.totals;
  const v = (k: string): number => tot[k] ?? 0;
  out.push(
    `**Scenario export**: ${s.nodes.length} message node(s). Totals: ${n(v("발송 수(건)"))} sends, ${n(v("오픈 수(건)"))} opens (open rate ${pct(v("오픈율(건)"))}), ${n(v("전환 수(건)"))} conversions (${pct(v("전환율(건)"))} of opens), revenue ${n(v("전환 수익"))} KRW, cost ${n(v("집행 비용"))}, ROAS ${v("ROAS").toFixed(2)}. User (명) totals add up each node's distinct users, so a user reached by two nodes counts twice.`,
  );
  const nodes = s.nodes.slice(0, lim.nodes);
  out.push(
    table(
      ["#", "channel", "branch", "sends", "open%", "conv", "days", "trend"],
      nodes.map((node) => [
        String(node.number),
        cell(node.channel),
        cell(node.branch),
        n(node.totals["발송 수(건)"] ?? 0),
        pct(node.totals["오픈율(건)"] ?? 0),
        n(node.totals["전환 수(건)"] ?? 0),
        String(node.days),
        node.trend
          ? `${node.trend.direction}, best ${node.trend.best_day.date}, worst ${node.trend.worst_day.date}`
          : "no daily rows",
      ]),
      { padded: true },
    ),
  );
  if (s.nodes.length > nodes.length) left.push(`${s.nodes.length - nodes.length} node(s)`);
  if (s.branches.length > 0) {
    out.push(`**A/B branches**:\n- ${s.branches.map((b) => md(b.verdict)).join("\n- ")}`);
  }
  const mismatched = s.nodes.filter((node) => node.mismatches.length > 0);
  out.push(
    mismatched.length === 0
      ? "Check: every node's summary row equals the sum of its daily sheet."
      : `Check: ${mismatched.length} node(s) differ from the sum of their daily sheet: ${mismatched
          .slice(0, 5)
          .map(
            (node) =>
              `#${node.number} ${node.mismatches.map((m) => `${md(m.metric)} ${m.summary} vs ${m.daily_sum}`).join(", ")}`,
          )
          .join("; ")}.`,
  );
  if (s.warnings.length > 0) out.push(`Warnings: ${s.warnings.slice(0, 5).map(inline).join("; ")}`);
  out.push(leftOutLine(left, more));
  return out.join("\n\n");
}

export function renderSummaryMarkdown(result: SummaryResult, options: RenderOptions = {}): string {
  const attempts: Limits[] = options.detail
    ? [{ rounds: 120, failures: 30, channels: 30, nodes: 200 }]
    : [
        { rounds: 8, failures: 5, channels: 8, nodes: 12 },
        { rounds: 4, failures: 3, channels: 4, nodes: 6 },
        { rounds: 0, failures: 2, channels: 3, nodes: 3 },
      ];
  const more = MORE_AT[options.reader ?? "tool"];
  let text = "";
  for (const lim of attempts) {
    text =
      result.kind === "campaign_event_data"
        ? campaignMarkdown(result, lim, more)
        : scenarioMarkdown(result, lim, more);
    if (options.detail || text.length < DEFAULT_BUDGET) return text;
  }
  return `${text.slice(0, DEFAULT_BUDGET - 80)}\n\n_Cut at ${DEFAULT_BUDGET} characters; see ${more.all} for every figure._`;
}
