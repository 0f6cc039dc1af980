import { markdownText, formatCount as n, percent as pct, table } from "../format.js";
import { CONTROL_GROUP } from "./campaign/columns.js";
import {
  type Lang,
  type MoreAt,
  SUMMARY_CATALOGUES,
  type SummaryMessages,
  warningText,
} from "./i18n/index.js";
import { summaryEn } from "./i18n/summary-en.js";
import { safeText } from "./safe-text.js";
import type { CampaignSummary, ScenarioSummary, SummaryResult } from "./schemas.js";

/**
 * Markdown for a model or a person: a few short paragraphs and compact tables, under 4,000
 * characters unless `detail` is asked for, with a line saying what was left out. Its words come
 * from the catalogue of the language asked for (i18n/summary-*.ts); English by default, the
 * language the model reads.
 */

const DEFAULT_BUDGET = 4000;
/** How the analysis marks a channel, and an error code or a currency, the file left empty. */
const EMPTY = summaryEn.empty;
const NO_VALUE = summaryEn.noValue;

export interface RenderOptions {
  detail?: boolean;
  /**
   * Who reads the text, so that its pointers to the rest are true: the model through
   * summarize_export (the `detail` argument, the structured result) or a person who ran the
   * `summarize` command (--detail, --json). Default: the tool.
   */
  reader?: "tool" | "command";
  /** The language of the text: English (the default) or Korean (`summarize --lang ko`). */
  lang?: Lang;
}

/**
 * A table cell of file text: unsafe characters out (table() escapes the markup); a field the file
 * left empty, or that the analysis marked so, in the reader's words.
 */
function cell(text: string, m: SummaryMessages): string {
  const safe = safeText(text);
  return safe === "" || safe === EMPTY ? m.empty : safe === NO_VALUE ? m.noValue : safe;
}

/** File text written outside a table: made safe and markup escaped. */
function inline(text: string, m: SummaryMessages): string {
  return markdownText(cell(text, m));
}

/** Prose that holds file text (already made safe when the result was built): markup escaped. */
function md(text: string): string {
  return markdownText(text);
}

function leftOutLine(left: string[], more: MoreAt, m: SummaryMessages): string {
  return left.length > 0 ? m.leftOut(left, more) : m.nothingLeft(more);
}

interface Limits {
  rounds: number;
  failures: number;
  channels: number;
  nodes: number;
}

function campaignMarkdown(
  s: CampaignSummary,
  lim: Limits,
  more: MoreAt,
  m: SummaryMessages,
): string {
  const c = m.campaign;
  const t = s.totals;
  const out: string[] = [];
  const left: string[] = [];
  const { first_scheduled_at: first, last_scheduled_at: last } = s.schedule;
  out.push(c.head(s, first === null ? null : cell(first, m), last === null ? null : cell(last, m)));
  const channels = s.delivery.by_channel.slice(0, lim.channels);
  if (channels.length > 1 || (channels[0] && channels[0].failed > 0)) {
    out.push(
      table(
        c.channelColumns,
        channels.map((x) => [
          cell(x.channel, m),
          n(x.sent),
          n(x.received),
          n(x.failed),
          pct(x.success_rate),
        ]),
        { padded: true },
      ),
    );
  }
  if (s.delivery.by_channel.length > channels.length) {
    left.push(c.moreChannels(s.delivery.by_channel.length - channels.length));
  }
  if (s.failures.length > 0) {
    const shown = s.failures.slice(0, lim.failures);
    out.push(
      c.failures(
        table(
          c.failureColumns,
          // JSON quoting escapes the sample's own quotes, so where it starts and ends is never in doubt.
          shown.map((f) => [cell(f.error_code, m), n(f.count), JSON.stringify(f.sample_message)]),
          { padded: true },
        ),
      ),
    );
    if (s.failures.length > shown.length)
      left.push(c.moreErrorCodes(s.failures.length - shown.length));
  }
  out.push(c.engagement(t, md(c.conversionNote(s))));
  const money = (sums: CampaignSummary["revenue"]["by_currency"]): string =>
    sums.map((x) => c.amount(x.amount, inline(x.currency, m), x.conversions)).join(", ") || m.none;
  // The headline is the send groups' revenue; the control group got no message, so its revenue
  // is no result of the campaign and is given apart.
  out.push(
    c.revenue(
      money(s.revenue.send_group_by_currency),
      t.control_conversions > 0 ? money(s.revenue.control_by_currency) : undefined,
      c.revenueNote(s),
    ),
  );
  const ab = s.ab_test;
  if (ab.groups.length > 0) {
    const lines = ab.groups.map((g) => c.abGroup(inline(g.group, m), g));
    const verdicts = ab.comparisons.map((x) => md(c.verdict(x)));
    const control = ab.control;
    const controlLines = control
      ? [
          control.comparison === null
            ? c.controlUntested(control, md(m.readout.controlNote(control, t)))
            : c.controlTested(
                control,
                md(c.verdict(control.comparison)),
                md(m.readout.controlNote(control, t)),
              ),
        ]
      : [];
    out.push(c.abHead([...lines, ...verdicts, ...controlLines]));
  }
  const tm = s.timing;
  const hours = tm.opens_by_hour
    .map((count, hour) => ({ count, hour }))
    .filter((h) => h.count > 0)
    .sort((a, b) => b.count - a.count)
    .slice(0, 3)
    .map((h) => c.hour(h.hour, h.count));
  out.push(c.timing(tm, hours, m.duration));
  const rounds = s.rounds.slice(0, lim.rounds);
  if (rounds.length > 0) {
    out.push(
      table(
        c.roundColumns,
        rounds.map((r) => [
          cell(r.task_id, m),
          cell(r.scheduled_at, m),
          cell(r.group, m),
          n(r.sent),
          n(r.received),
          n(r.failed),
          n(r.opens),
          // A control round sends nothing, so it has no open rate (0% would read as a result).
          r.group === CONTROL_GROUP ? m.notApplicable : pct(r.open_rate_users),
          n(r.conversions),
        ]),
        { padded: true },
      ),
    );
  }
  if (s.rounds.length > rounds.length) left.push(c.moreRounds(s.rounds.slice(rounds.length)));
  if (s.warnings.length > 0) {
    out.unshift(m.warnings(s.warnings.map((w) => md(warningText(w, m.readout)))));
  }
  if (s.unidentified_rows > 0) out.push(c.unidentified(s.unidentified_rows));
  out.push(leftOutLine(left, more, m));
  return out.join("\n\n");
}

function scenarioMarkdown(
  s: ScenarioSummary,
  lim: Limits,
  more: MoreAt,
  m: SummaryMessages,
): string {
  const c = m.scenario;
  const out: string[] = [];
  const left: string[] = [];
  const tot = s.totals;
  const v = (k: string): number => tot[k] ?? 0;
  out.push(c.head(s, v));
  const nodes = s.nodes.slice(0, lim.nodes);
  out.push(
    table(
      c.nodeColumns,
      nodes.map((node) => [
        String(node.number),
        cell(node.channel, m),
        cell(node.branch, m),
        n(node.totals["발송 수(건)"] ?? 0),
        pct(node.totals["오픈율(건)"] ?? 0),
        n(node.totals["전환 수(건)"] ?? 0),
        String(node.days),
        c.trend(node.trend),
      ]),
      { padded: true },
    ),
  );
  if (s.nodes.length > nodes.length) left.push(c.moreNodes(s.nodes.length - nodes.length));
  if (s.branches.length > 0) out.push(c.branches(s.branches.map((b) => md(c.branchVerdict(b)))));
  const mismatched = s.nodes.filter((node) => node.mismatches.length > 0);
  out.push(
    mismatched.length === 0
      ? c.checkOk
      : c.checkDiffers(
          mismatched.length,
          mismatched.slice(0, 5).map((node) =>
            c.mismatchNode(
              node.number,
              node.mismatches.map((x) => c.mismatch(md(x.metric), x.summary, x.daily_sum)),
            ),
          ),
        ),
  );
  if (s.warnings.length > 0) {
    out.push(c.warnings(s.warnings.slice(0, 5).map((w) => inline(warningText(w, m.readout), m))));
  }
  out.push(leftOutLine(left, more, m));
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
  const m = SUMMARY_CATALOGUES[options.lang ?? "en"];
  const more = m.more[options.reader ?? "tool"];
  let text = "";
  for (const lim of attempts) {
    text =
      result.kind === "campaign_event_data"
        ? campaignMarkdown(result, lim, more, m)
        : scenarioMarkdown(result, lim, more, m);
    if (options.detail || text.length < DEFAULT_BUDGET) return text;
  }
  return `${text.slice(0, DEFAULT_BUDGET - 80)}\n\n${m.cut(DEFAULT_BUDGET, more)}`;
}
