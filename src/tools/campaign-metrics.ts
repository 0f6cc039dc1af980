import { DateTime } from "luxon";
import { z } from "zod";
import {
  DEFAULT_METRICS_WINDOW_DAYS,
  describeWindowKst,
  formatMetricsParam,
  KST,
  type MetricsWindow,
  resolveMetricsWindow,
  splitMetricsWindow,
  windowToExportDates,
  windowToUtc,
  zoneLabel,
} from "../api/dates.js";
import { EXPORT_MAX_ROUNDS, EXPORT_MAX_SENDS, MAX_METRICS_WINDOW_DAYS } from "../api/limits.js";
import { type MetricsCampaign, type MetricsTask, SCHEDULE_TYPES } from "../api/schemas.js";
import {
  callHint,
  describeCalls,
  formatCount,
  formatNumber,
  money,
  moreNotShown,
  type NextCall,
  nextCall,
  percent,
  roundRatio,
  table,
  truncate,
} from "../format.js";
import { REPORT_VIEW_URI } from "../resources/report-view.js";
import { blankToUndefined } from "../text-input.js";
import { checkInteger, resultBase } from "./params.js";
import { defineTool } from "./tool.js";
import { ToolInputError } from "./tool-errors.js";

const DEFAULT_DAYS = DEFAULT_METRICS_WINDOW_DAYS;
const DEFAULT_TOP_N = 20;
const MAX_TOP_N = 500;
/**
 * The longest window one call covers: about three years, 7 requests of 180 days. The service
 * holds no more than that for a useful answer, and an unbounded window (0001 to 9999) would be
 * some 20,000 requests.
 */
export const MAX_CALL_WINDOW_DAYS = 3 * 365;
/** One deadline for all of a call's requests together (each request also has its own timeout). */
export const METRICS_CALL_SECONDS = 90;
const MAX_TASKS_LISTED = 200;
/** Task rows printed in the text; the rest of the returned ones are in structuredContent. */
const TASKS_IN_TEXT = 30;
const SORT_KEYS = [
  "sent",
  "open_rate",
  "conversion_rate",
  "revenue",
  "purchases",
  "name",
  "latest",
] as const;

// Strict: an unknown argument (a typo, or a filter this tool does not have) is an error naming
// it, not silently dropped into an unfiltered answer.
const inputSchema = z.strictObject({
  task_from: z
    .string()
    .optional()
    .describe(
      `Start, inclusive: YYYY-MM-DD or ISO 8601 (KST). Default: ${DEFAULT_DAYS} days back.`,
    ),
  task_to: z
    .string()
    .optional()
    .describe(
      `End: a YYYY-MM-DD day is included; a date-time is exclusive. Default: today. At most ${MAX_CALL_WINDOW_DAYS} days.`,
    ),
  campaign_schedule_type: z.enum(SCHEDULE_TYPES).optional().describe("Only this kind."),
  campaign_ids: z.array(z.string()).optional().describe("Only these IDs."),
  tag: z.string().optional().describe("Only this tag (case-insensitive)."),
  name_contains: z.string().optional().describe("Name contains (case-insensitive)."),
  sort_by: z
    .enum(SORT_KEYS)
    .optional()
    .describe("Default sent; revenue ranks KRW first; latest: most recent round."),
  top_n: z
    .number()
    .meta({ minimum: 1, maximum: MAX_TOP_N })
    .optional()
    .describe(`1 to ${MAX_TOP_N} (default ${DEFAULT_TOP_N}); totals cover all matches.`),
  include_tasks: z
    .boolean()
    .optional()
    .describe(`true: also the rounds (tasks) of returned campaigns, up to ${MAX_TASKS_LISTED}.`),
});

const moneyOutput = z
  .record(z.string(), z.number())
  .describe("Amounts keyed by currency code; never added across currencies.");
const sums = {
  task_count: z.number(),
  sent_count: z.number(),
  received_count: z.number(),
  open_count: z.number(),
  click_count: z.number(),
  purchase_count: z
    .number()
    .describe("All purchases the service attributes to the rounds, control group included."),
  purchase_count_by_open: z
    .number()
    .describe("Purchases attributed to an open (the basis of the service's conversion_rate)."),
  revenue: moneyOutput,
  cost: moneyOutput,
  computed_open_rate: z.number().nullable().describe("Computed here: open_count / received_count."),
  computed_click_rate: z
    .number()
    .nullable()
    .describe("Computed here: click_count / received_count."),
  computed_conversion_rate: z
    .number()
    .nullable()
    .describe(
      "Computed here: purchase_count_by_open / open_count (the basis of the service's per-round conversion_rate).",
    ),
};
const campaignOutput = z.object({
  _id: z.string(),
  name: z.string(),
  schedule_type: z.string(),
  tags: z.array(z.string()),
  is_ab_test: z.boolean(),
  channels: z.array(z.string()).describe("Channels of its rounds in the window."),
  conversion_event_type: z.string(),
  first_scheduled_at: z.string(),
  last_scheduled_at: z.string(),
  ...sums,
});
const taskOutput = z.object({
  _id: z.string(),
  campaign_id: z.string(),
  scheduled_at: z.string(),
  channel: z.string(),
  sent_count: z.number(),
  received_count: z.number(),
  open_count: z.number(),
  click_count: z.number(),
  purchase_count: z.number(),
  revenue: z.number(),
  revenue_currency: z.string(),
  cost: z.number(),
  cost_currency: z.string(),
  open_user_count: z.number(),
  open_rate: z.number().nullable().describe("As returned by the service."),
  conversion_rate: z.number().nullable().describe("As returned by the service."),
});

const outputSchema = z.object({
  ...resultBase,
  window: z.object({
    kst: z.string().describe("The window used, in KST, end exclusive."),
    task_from: z.string().describe("task_from sent (KST, ISO 8601)."),
    task_to: z.string().describe("task_to sent (KST, ISO 8601, exclusive)."),
    utc: z.object({ from: z.string(), to: z.string() }),
    requests: z
      .number()
      .describe(`API requests made (windows over ${MAX_METRICS_WINDOW_DAYS} days are split).`),
  }),
  filters: z.record(z.string(), z.unknown()),
  matched_campaigns: z.number().describe("Campaigns matching all filters."),
  campaigns: z
    .array(campaignOutput)
    .describe("The top campaigns by sort_by; sums over their rounds (tasks)."),
  more_not_shown: z.number(),
  totals: z.object(sums).describe("The same sums over all matched campaigns."),
  tasks: z
    .array(taskOutput)
    .optional()
    .describe(`Rounds of the returned campaigns, newest first (at most ${MAX_TASKS_LISTED}).`),
  tasks_not_shown: z
    .number()
    .optional()
    .describe("Older rounds not returned at all (narrow the window or filter to see them)."),
});

type CampaignOut = z.output<typeof campaignOutput>;
type Sums = z.output<z.ZodObject<typeof sums>>;

export default defineTool({
  name: "campaign_metrics",
  title: "Campaign metrics",
  description: `Campaigns with a round in a time window, ranked, with sent, received, opens, clicks, purchases, revenue and cost (per currency) summed over their rounds. Use first, to find a campaign (its _id feeds start_export) or to report on any period.
Returns the top campaigns, totals over all matches, rates recomputed from sums (computed_*), and rounds with include_tasks. Windows are read in KST; over ${MAX_METRICS_WINDOW_DAYS} days they are split and merged, up to ${MAX_CALL_WINDOW_DAYS} days (about 3 years) within ${METRICS_CALL_SECONDS} s.
Example: campaign_metrics {"task_from": "2026-10-01", "task_to": "2026-10-31", "sort_by": "revenue", "top_n": 10}`,
  inputSchema,
  outputSchema,
  appView: REPORT_VIEW_URI,
  annotations: { readOnlyHint: true, openWorldHint: true },
  async handler(args, runtime, call) {
    checkInteger(args.top_n, "top_n", 1, MAX_TOP_N);
    const window = defaultWindow(args.task_from, args.task_to, runtime.now());
    checkWindowLength(window, runtime.now());
    const spans = splitMetricsWindow(window);
    const deadline = Date.now() + METRICS_CALL_SECONDS * 1000;
    const api = await runtime.api();
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
      const response = await api.campaignMetrics(
        {
          task_from: formatMetricsParam(span.from),
          task_to: formatMetricsParam(span.to),
          ...(args.campaign_schedule_type === undefined
            ? {}
            : { campaign_schedule_type: args.campaign_schedule_type }),
        },
        { signal: call.signal, deadline },
      );
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

    const filtered = [...campaigns.values()].filter((c) => matches(c, args));
    const summarized = filtered.map(summarizeCampaign);
    sortCampaigns(summarized, args.sort_by ?? "sent");
    const topN = args.top_n ?? DEFAULT_TOP_N;
    const shown = summarized.slice(0, topN);
    const totals = sumAll(filtered);
    const kst = describeWindowKst(window);
    const period = describePeriod(window);

    let tasks: Array<z.output<typeof taskOutput>> | undefined;
    let tasksNotShown: number | undefined;
    if (args.include_tasks === true) {
      const shownIds = new Set(shown.map((c) => c._id));
      // Newest first: when the cap cuts, the recent rounds (the ones asked about) stay.
      const all = filtered
        .filter((c) => shownIds.has(c._id))
        .flatMap((c) => c.tasks)
        .sort((a, b) => Date.parse(b.scheduled_at) - Date.parse(a.scheduled_at));
      tasks = all.slice(0, MAX_TASKS_LISTED).map(taskRow);
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
        filters,
        matched_campaigns: filtered.length,
        campaigns: shown,
        more_not_shown: summarized.length - shown.length,
        totals,
        ...(tasks === undefined ? {} : { tasks, tasks_not_shown: tasksNotShown }),
      },
      text: renderText({
        summary,
        nextStep,
        requests: spans.length,
        shown,
        total: summarized.length,
        totals,
        tasks,
        tasksNotShown,
        split: split?.reason,
        zone: runtime.config.timeZone,
      }),
    };
  },
});

/**
 * The window in the words the export tools use for dates ("2026-11-01 to 2026-11-07
 * (inclusive, KST)") when it is whole days, else its exact KST times.
 */
function describePeriod(window: MetricsWindow): string {
  const from = window.from.setZone(KST);
  const to = window.to.setZone(KST);
  const midnight = (dt: DateTime) => dt.equals(dt.startOf("day"));
  if (!midnight(from) || !midnight(to)) return describeWindowKst(window);
  const last = to.minus({ days: 1 });
  return `${from.toISODate()} to ${last.toISODate()} (inclusive, KST)`;
}

function defaultWindow(
  from: string | undefined,
  to: string | undefined,
  now: number,
): MetricsWindow {
  const today = DateTime.fromMillis(now, { zone: KST }).toISODate() as string;
  return resolveMetricsWindow(blankToUndefined(from), blankToUndefined(to) ?? today, DEFAULT_DAYS);
}

/** Refuses a window longer than one call covers, before any request, saying what to do. */
function checkWindowLength(window: MetricsWindow, now: number): void {
  const days = window.to.diff(window.from, "days").days;
  if (!(days > MAX_CALL_WINDOW_DAYS)) return;
  // The suggestion ends at the window's end, or tomorrow's start when that is later than today.
  const tomorrow = DateTime.fromMillis(now, { zone: KST }).startOf("day").plus({ days: 1 });
  const end = DateTime.min(window.to, tomorrow);
  const to = formatMetricsParam(end);
  const from = formatMetricsParam(end.minus({ days: MAX_CALL_WINDOW_DAYS }));
  throw new ToolInputError(
    "task_from",
    `the window from task_from to task_to is ${Math.round(days).toLocaleString("en-US")} days; one campaign_metrics call covers at most ${MAX_CALL_WINDOW_DAYS.toLocaleString("en-US")} days (about 3 years, ${Math.ceil(MAX_CALL_WINDOW_DAYS / MAX_METRICS_WINDOW_DAYS)} requests of the service's ${MAX_METRICS_WINDOW_DAYS}-day limit). Narrow it, e.g. ${callHint("campaign_metrics", { task_from: from, task_to: to })}, or make one call per period.`,
  );
}

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

function matches(campaign: MetricsCampaign, args: z.output<typeof inputSchema>): boolean {
  if (
    args.campaign_ids !== undefined &&
    args.campaign_ids.length > 0 &&
    !args.campaign_ids.includes(campaign._id)
  ) {
    return false;
  }
  if (args.tag !== undefined && args.tag !== "") {
    const tag = args.tag.toLowerCase();
    if (!campaign.tags.some((t) => t.toLowerCase() === tag)) return false;
  }
  if (
    args.name_contains !== undefined &&
    !campaign.name.toLowerCase().includes(args.name_contains.toLowerCase())
  ) {
    return false;
  }
  return campaign.tasks.length > 0;
}

function emptySums(): Sums {
  return {
    task_count: 0,
    sent_count: 0,
    received_count: 0,
    open_count: 0,
    click_count: 0,
    purchase_count: 0,
    purchase_count_by_open: 0,
    revenue: {},
    cost: {},
    computed_open_rate: null,
    computed_click_rate: null,
    computed_conversion_rate: null,
  };
}

function addMoney(target: Record<string, number>, currency: string, amount: number): void {
  if (amount === 0 && currency === "") return;
  target[currency] = (target[currency] ?? 0) + amount;
}

function withRates(s: Sums): Sums {
  const ratio = (a: number, b: number) => (b === 0 ? null : roundRatio(a / b));
  s.computed_open_rate = ratio(s.open_count, s.received_count);
  s.computed_click_rate = ratio(s.click_count, s.received_count);
  // The service's own conversion_rate counts purchases by open; purchase_count also holds the
  // control group's, which would put opens and purchases of different people in one ratio.
  s.computed_conversion_rate = ratio(s.purchase_count_by_open, s.open_count);
  return s;
}

function addTask(s: Sums, t: MetricsTask): void {
  s.task_count += 1;
  s.sent_count += t.sent_count;
  s.received_count += t.received_count;
  s.open_count += t.open_count;
  s.click_count += t.click_count;
  s.purchase_count += t.purchase_count;
  s.purchase_count_by_open += t.purchase_count_by_open;
  addMoney(s.revenue, t.revenue_currency, t.revenue);
  addMoney(s.cost, t.cost_currency, t.cost);
}

function summarizeCampaign(campaign: MetricsCampaign): CampaignOut {
  const s = emptySums();
  for (const task of campaign.tasks) addTask(s, task);
  const times = campaign.tasks.map((t) => t.scheduled_at).sort();
  return {
    _id: campaign._id,
    name: campaign.name,
    schedule_type: campaign.schedule_type,
    tags: campaign.tags,
    is_ab_test: campaign.is_ab_test,
    channels: [...new Set(campaign.tasks.map((t) => t.channel))].sort(),
    conversion_event_type: campaign.conversion.event_type,
    first_scheduled_at: times[0] ?? "",
    last_scheduled_at: times[times.length - 1] ?? "",
    ...withRates(s),
  };
}

function sumAll(campaigns: MetricsCampaign[]): Sums {
  const s = emptySums();
  for (const c of campaigns) for (const task of c.tasks) addTask(s, task);
  return withRates(s);
}

function sortCampaigns(list: CampaignOut[], key: (typeof SORT_KEYS)[number]): void {
  const num = (v: number | null) => v ?? -1;
  const revenue = (c: CampaignOut) => c.revenue.KRW ?? Object.values(c.revenue)[0] ?? 0;
  const by: Record<typeof key, (a: CampaignOut, b: CampaignOut) => number> = {
    sent: (a, b) => b.sent_count - a.sent_count,
    open_rate: (a, b) => num(b.computed_open_rate) - num(a.computed_open_rate),
    conversion_rate: (a, b) => num(b.computed_conversion_rate) - num(a.computed_conversion_rate),
    revenue: (a, b) => revenue(b) - revenue(a),
    purchases: (a, b) => b.purchase_count - a.purchase_count,
    name: (a, b) => a.name.localeCompare(b.name),
    latest: (a, b) => b.last_scheduled_at.localeCompare(a.last_scheduled_at),
  };
  list.sort((a, b) => by[key](a, b) || a._id.localeCompare(b._id));
}

function taskRow(t: MetricsTask): z.output<typeof taskOutput> {
  return {
    _id: t._id,
    campaign_id: t.campaign_id,
    scheduled_at: t.scheduled_at,
    channel: t.channel,
    sent_count: t.sent_count,
    received_count: t.received_count,
    open_count: t.open_count,
    click_count: t.click_count,
    purchase_count: t.purchase_count,
    revenue: t.revenue,
    revenue_currency: t.revenue_currency,
    cost: t.cost,
    cost_currency: t.cost_currency,
    open_user_count: t.open_user_count,
    open_rate: t.open_rate === null ? null : roundRatio(t.open_rate),
    conversion_rate: t.conversion_rate === null ? null : roundRatio(t.conversion_rate),
  };
}

/**
 * When one export of the campaign's rounds would exceed the service's limit (spec 4.2), date
 * ranges (in the app's zone) that each stay under it, oldest first, as exact calls. Sends of
 * all rounds are counted (the service counts aggregated ones only), and an A/B campaign's
 * rounds count twice (its groups count separately): both err on the safe side.
 */
export function exportSplit(
  campaign: MetricsCampaign,
  zone: string,
): { calls: NextCall[]; reason: string } | undefined {
  const roundsPerTask = campaign.is_ab_test ? 2 : 1;
  const sends = campaign.tasks.reduce((a, t) => a + t.sent_count, 0);
  const rounds = campaign.tasks.length * roundsPerTask;
  if (sends <= EXPORT_MAX_SENDS && rounds <= EXPORT_MAX_ROUNDS) return undefined;
  const byDate = new Map<string, { sends: number; rounds: number }>();
  for (const t of campaign.tasks) {
    const date = DateTime.fromISO(t.scheduled_at, { zone }).toISODate() ?? "";
    const day = byDate.get(date) ?? { sends: 0, rounds: 0 };
    day.sends += t.sent_count;
    day.rounds += roundsPerTask;
    byDate.set(date, day);
  }
  const ranges: Array<{ from: string; to: string }> = [];
  let current: { from: string; to: string; sends: number; rounds: number } | undefined;
  for (const [date, day] of [...byDate.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    if (
      current !== undefined &&
      (current.sends + day.sends > EXPORT_MAX_SENDS ||
        current.rounds + day.rounds > EXPORT_MAX_ROUNDS)
    ) {
      ranges.push({ from: current.from, to: current.to });
      current = undefined;
    }
    current ??= { from: date, to: date, sends: 0, rounds: 0 };
    current.to = date;
    current.sends += day.sends;
    current.rounds += day.rounds;
  }
  if (current !== undefined) ranges.push({ from: current.from, to: current.to });
  const over =
    sends > EXPORT_MAX_SENDS
      ? `${formatCount(sends)} sends > ${formatCount(EXPORT_MAX_SENDS)}`
      : `${rounds} rounds${campaign.is_ab_test ? " (A/B groups counted separately)" : ""} > ${EXPORT_MAX_ROUNDS}`;
  return {
    calls: ranges.map((r) =>
      nextCall("start_export", {
        type: "campaign_event_data",
        campaign_id: campaign._id,
        from: r.from,
        to: r.to,
      }),
    ),
    reason: `the top campaign is too large for one export in this window (${over}), so export it in ${ranges.length} date ranges (one job each)`,
  };
}

interface TextParts {
  summary: string;
  nextStep: string;
  /** API requests made (more than one when the window was split). */
  requests: number;
  shown: CampaignOut[];
  /** Campaigns matched, shown or not. */
  total: number;
  totals: Sums;
  tasks: Array<z.output<typeof taskOutput>> | undefined;
  tasksNotShown: number | undefined;
  /** Why the next step is several exports, when one would exceed the service's limit. */
  split: string | undefined;
  zone: string;
}

function plural(n: number, noun: string): string {
  return `${formatCount(n)} ${noun}${n === 1 ? "" : "s"}`;
}

function renderText(parts: TextParts): string {
  const { summary, nextStep, requests, shown, total, totals, tasks, tasksNotShown, split, zone } =
    parts;
  const lines = [summary];
  if (requests > 1)
    lines.push(
      `(Window longer than ${MAX_METRICS_WINDOW_DAYS} days: ${requests} requests merged.)`,
    );
  if (shown.length > 0) {
    lines.push(
      table(
        [
          "_id",
          "name",
          "type",
          "A/B",
          "channels",
          "rounds",
          "received",
          "open%*",
          "conv%*",
          "purchases",
          "revenue",
        ],
        shown.map((c) => [
          c._id,
          truncate(c.name, 28),
          c.schedule_type,
          c.is_ab_test ? "A/B" : "",
          c.channels.join(", "),
          c.task_count,
          formatNumber(c.received_count),
          percent(c.computed_open_rate),
          percent(c.computed_conversion_rate),
          formatNumber(c.purchase_count),
          money(c.revenue),
        ]),
      ),
    );
    const more = moreNotShown(total, shown.length, "raise top_n or filter");
    lines.push(
      [
        "*computed here: open% = opens/received, conv% = purchases by open/opens (as the service's conversion_rate).",
        more,
      ]
        .filter((part) => part !== "")
        .join(" "),
    );
  }
  lines.push(
    `Totals: ${plural(totals.task_count, "round")}, ${formatNumber(totals.sent_count)} sent, ${formatNumber(totals.received_count)} received, ${formatNumber(totals.open_count)} opens, ${formatNumber(totals.click_count)} clicks, ${formatNumber(totals.purchase_count)} purchases; revenue ${money(totals.revenue)}; cost ${money(totals.cost)}.`,
  );
  if (tasks !== undefined) {
    lines.push(
      table(
        [
          "task _id",
          "campaign",
          `scheduled (${zoneLabel(zone)})`,
          "channel",
          "received",
          "opens",
          "purchases",
        ],
        tasks
          .slice(0, TASKS_IN_TEXT)
          .map((t) => [
            t._id,
            t.campaign_id,
            DateTime.fromISO(t.scheduled_at, { zone }).toFormat("yyyy-MM-dd HH:mm"),
            t.channel,
            formatCount(t.received_count),
            formatCount(t.open_count),
            formatCount(t.purchase_count),
          ]),
      ),
    );
    const inStructured = tasks.length - Math.min(TASKS_IN_TEXT, tasks.length);
    const notReturned = tasksNotShown ?? 0;
    const notes = [
      inStructured > 0
        ? `${plural(inStructured, "older round")} in structuredContent.tasks only`
        : "",
      notReturned > 0
        ? `${plural(notReturned, "older round")} not returned at all (narrow the window or filter by campaign_ids)`
        : "",
    ].filter((n) => n !== "");
    if (notes.length > 0) lines.push(`Newest rounds first; ${notes.join("; ")}.`);
  }
  lines.push(
    shown.length === 0
      ? `No campaign has rounds in this window with these filters. Next: ${nextStep}.`
      : split !== undefined
        ? `Next: ${split}: ${nextStep}.`
        : `Next: export the top campaign's raw events for this window with ${nextStep}.`,
  );
  return lines.join("\n");
}
