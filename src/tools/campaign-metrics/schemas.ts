import { z } from "zod";
import { DEFAULT_METRICS_WINDOW_DAYS } from "../../api/dates.js";
import { MAX_METRICS_WINDOW_DAYS } from "../../api/limits.js";
import { SCHEDULE_TYPES } from "../../api/schemas.js";
import { resultBase } from "../../mcp/params.js";
import { COMPARE_TO } from "./compare-window.js";

/** campaign_metrics' arguments and result as the model sees them, and the limits they state. */

export const DEFAULT_DAYS = DEFAULT_METRICS_WINDOW_DAYS;
export const DEFAULT_TOP_N = 20;
export const MAX_TOP_N = 500;
/**
 * The longest window one call covers: about three years, 7 requests of MAX_METRICS_WINDOW_DAYS. The service
 * holds no more than that for a useful answer, and an unbounded window (0001 to 9999) would be
 * some 20,000 requests.
 */
export const MAX_CALL_WINDOW_DAYS = 3 * 365;
export const MAX_TASKS_LISTED = 200;
/** Task rows printed in the text; the rest of the returned ones are in structuredContent. */
export const TASKS_IN_TEXT = 30;
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
export const inputSchema = z.strictObject({
  task_from: z
    .string()
    .optional()
    .describe(`Start: YYYY-MM-DD or ISO 8601 (KST). Default ${DEFAULT_DAYS} days back.`),
  task_to: z
    .string()
    .optional()
    .describe(
      `End: a YYYY-MM-DD day included, a date-time exclusive. Default today; at most ${MAX_CALL_WINDOW_DAYS} days.`,
    ),
  campaign_schedule_type: z.enum(SCHEDULE_TYPES).optional(),
  campaign_ids: z.array(z.string()).optional(),
  tag: z.string().optional().describe("Case-insensitive."),
  name_contains: z.string().optional().describe("Case-insensitive."),
  sort_by: z
    .enum(SORT_KEYS)
    .optional()
    .describe("Default sent; revenue: KRW first; latest: newest round."),
  top_n: z
    .number()
    .meta({ minimum: 1, maximum: MAX_TOP_N })
    .optional()
    .describe(`Default ${DEFAULT_TOP_N}.`),
  include_tasks: z
    .boolean()
    .optional()
    .describe(`true: also their rounds, up to ${MAX_TASKS_LISTED}.`),
  compare_to: z
    .enum(COMPARE_TO)
    .optional()
    .describe(
      "Adds comparison with previous_period (same length, just before) or same_period_last_year (same dates a year back; Feb 29 as Feb 28).",
    ),
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
  revenue: moneyOutput.describe(
    "Amounts keyed by currency code; the service adds only KRW payments to a round's revenue, so purchases paid in another currency are in purchase_count but not here.",
  ),
  cost: moneyOutput,
  rounds_aggregating: z
    .number()
    .describe(
      "Rounds whose aggregation may not be finished (within a day of their conversion deadline): an export made now may leave them out.",
    ),
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
const sumsOutput = z.object(sums);
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
  previous: sumsOutput
    .optional()
    .describe("With compare_to: the same sums in the other window, when it had rounds there."),
});
export const taskOutput = z.object({
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
  aggregating: z.boolean().describe("May still be aggregating: an export made now may lack it."),
  open_rate: z.number().nullable().describe("As returned by the service."),
  conversion_rate: z.number().nullable().describe("As returned by the service."),
});

const changeOutput = z.object({
  previous: z.number().nullable(),
  current: z.number().nullable(),
  delta: z.number().nullable().describe("current - previous; for rates a ratio (0.018 = +1.8 pp)."),
  pct: z
    .number()
    .nullable()
    .describe("delta / previous in percent (12.5 = +12.5%); null when previous is 0 or null."),
});
const moneyChange = z
  .record(z.string(), changeOutput)
  .describe("Keyed by currency code: each currency compared with itself only.");
const comparisonOutput = z.object({
  compare_to: z.enum(COMPARE_TO),
  task_from: z.string().describe("Start of the other window (KST, ISO 8601)."),
  task_to: z.string().describe("End of the other window (KST, ISO 8601, exclusive)."),
  kst: z.string(),
  requests: z.number().describe("API requests made for the other window."),
  matched_campaigns: z.number().describe("Campaigns matching all filters there; 0: no data."),
  totals: sumsOutput.describe("The sums over the other window, with the same filters."),
  change: z.object({
    sent_count: changeOutput,
    received_count: changeOutput,
    open_count: changeOutput,
    click_count: changeOutput,
    purchase_count: changeOutput,
    computed_open_rate: changeOutput,
    computed_click_rate: changeOutput,
    computed_conversion_rate: changeOutput,
    revenue: moneyChange,
    cost: moneyChange,
  }),
});

export const outputSchema = z.object({
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
  vs_export: z
    .array(z.string())
    .describe(
      "How a CSV export of this window may differ from these figures (rules of the service).",
    ),
  filters: z.record(z.string(), z.unknown()),
  matched_campaigns: z.number().describe("Campaigns matching all filters."),
  campaigns: z
    .array(campaignOutput)
    .describe("The top campaigns by sort_by; sums over their rounds (tasks)."),
  more_not_shown: z.number(),
  totals: sumsOutput.describe("The same sums over all matched campaigns."),
  tasks: z
    .array(taskOutput)
    .optional()
    .describe(`Rounds of the returned campaigns, newest first (at most ${MAX_TASKS_LISTED}).`),
  tasks_not_shown: z
    .number()
    .optional()
    .describe("Older rounds not returned at all (narrow the window or filter to see them)."),
  comparison: comparisonOutput
    .optional()
    .describe("With compare_to: other window's totals, change: {previous, current, delta, pct}"),
});

export type SortKey = (typeof SORT_KEYS)[number];
export type CampaignMetricsArgs = z.output<typeof inputSchema>;
export type CampaignOut = z.output<typeof campaignOutput>;
export type TaskOut = z.output<typeof taskOutput>;
export type Sums = z.output<typeof sumsOutput>;
export type ComparisonOut = z.output<typeof comparisonOutput>;
