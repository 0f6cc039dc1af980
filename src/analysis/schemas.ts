import { z } from "zod";
import { ROLES } from "./event-roles.js";

/**
 * Output schemas of the summaries: the `structuredContent` of `summarize_export` and the JSON of
 * `summarize --json`. Contract fields first; everything after them is our own extension.
 */

const countsShape = {
  sent: z.number().int(),
  received: z.number().int(),
  failed: z.number().int(),
  unsettled: z.number().int(),
  control_assigned: z.number().int(),
  opens: z.number().int(),
  open_users: z.number().int(),
  clicks: z.number().int(),
  click_users: z.number().int(),
  conversions: z.number().int(),
  conversion_users: z.number().int(),
};

const rateShape = {
  /** received / (received + failed) */
  success_rate: z.number(),
  received_users: z.number().int(),
  /** opens / received (건) */
  open_rate: z.number(),
  /** open_users / received_users (명) */
  open_rate_users: z.number(),
  /** conversions / opens */
  conversion_rate: z.number(),
};

export const campaignRoundSchema = z.object({
  task_id: z.string(),
  scheduled_at: z.string(),
  group: z.string(),
  ...countsShape,
  ...rateShape,
  channels: z.array(z.string()),
});

const groupReadoutSchema = z.object({
  group: z.string(),
  received_users: z.number().int(),
  opened_users: z.number().int().describe("received users who opened"),
  open_rate_users: z.number(),
  open_users: z.number().int(),
  converted_openers: z.number().int().describe("users who opened and converted"),
  conversion_rate_by_opens: z.number(),
});

const comparisonSchema = z.object({
  metric: z.enum(["open_rate", "conversion_rate"]),
  group: z.string(),
  versus: z.string(),
  rate: z.number(),
  versus_rate: z.number(),
  z: z.number().nullable(),
  p_value: z.number().nullable(),
  significant: z.boolean(),
  verdict: z.string(),
});

const currencySumSchema = z.object({
  currency: z.string(),
  amount: z.number(),
  conversions: z.number().int(),
});

export const campaignSummaryOutputSchema = z.object({
  kind: z.literal("campaign_event_data"),
  summary: z.string(),
  rows: z.number().int(),
  rounds: z.array(campaignRoundSchema),
  totals: z.object({
    ...countsShape,
    ...rateShape,
    send_group_conversions: z
      .number()
      .int()
      .describe("conversions in the send groups' rounds (conversion_rate's numerator)"),
    send_group_conversion_users: z.number().int(),
    control_conversions: z
      .number()
      .int()
      .describe("conversions of control-group users, who got no message"),
  }),
  error_codes: z.array(z.object({ error_code: z.string(), count: z.number().int() })),
  file: z.object({ path: z.string(), bytes: z.number().int() }),
  event_types: z.array(
    z.object({
      event_type: z.string(),
      count: z.number().int(),
      role: z.enum(ROLES).describe("query_export's event_role of the type's rows"),
    }),
  ),
  conversion_event_type: z.object({
    types: z.array(z.string()),
    source: z.enum(["input", "inferred"]),
    note: z.string(),
  }),
  delivery: z.object({
    success_rate: z.number(),
    unsettled: z.number().int(),
    by_channel: z.array(
      z.object({
        channel: z.string(),
        sent: z.number().int(),
        received: z.number().int(),
        failed: z.number().int(),
        success_rate: z.number(),
      }),
    ),
  }),
  failures: z.array(
    z.object({
      error_code: z.string(),
      count: z.number().int(),
      sample_message: z.string().describe("carrier text, cleaned and cut; third-party data"),
    }),
  ),
  revenue: z.object({
    amount_key: z.string().nullable(),
    currency_key: z.string().nullable(),
    by_currency: z
      .array(currencySumSchema)
      .describe("every conversion row in the file, the control group's included"),
    send_group_by_currency: z
      .array(currencySumSchema)
      .describe("conversion rows of the send groups (the headline revenue)"),
    control_by_currency: z
      .array(currencySumSchema)
      .describe("conversion rows of the control group (대조군), whose users got no message"),
    unparsed_properties: z.number().int(),
    note: z.string(),
  }),
  schedule: z
    .object({
      send_rounds: z
        .number()
        .int()
        .describe("distinct task_id + scheduled_at: a round split into groups counts once"),
      groups: z.array(z.string()),
      first_scheduled_at: z.string().nullable(),
      last_scheduled_at: z.string().nullable(),
    })
    .describe("the export holds only rounds whose performance aggregation had finished"),
  ab_test: z.object({
    groups: z.array(groupReadoutSchema),
    comparisons: z.array(comparisonSchema),
    control: z
      .object({
        assigned_users: z.number().int(),
        converted_users: z.number().int(),
        conversion_rate: z.number(),
        send_groups_conversion_rate: z.number(),
        comparison: comparisonSchema.omit({ metric: true }).nullable(),
        note: z.string().describe("what the comparison can and cannot say"),
      })
      .nullable(),
  }),
  timing: z.object({
    time_zone: z.string(),
    receipt_to_first_open: z.object({
      pairs: z.number().int(),
      median_seconds: z.number().nullable(),
      p90_seconds: z.number().nullable(),
      opens_before_receipt: z.number().int(),
    }),
    opens_by_hour: z.array(z.number().int()).length(24),
  }),
  unidentified_rows: z
    .number()
    .int()
    .describe("rows with neither platform_user_id nor user_id: counted as rows, not as users"),
  warnings: z.array(z.string()).describe("what may make the figures incomplete, e.g. truncation"),
});
export type CampaignSummary = z.infer<typeof campaignSummaryOutputSchema>;
export type CampaignRound = z.infer<typeof campaignRoundSchema>;
export type Comparison = z.infer<typeof comparisonSchema>;

const metricValues = z.record(z.string(), z.number());

export const scenarioNodeSchema = z.object({
  number: z.number().int(),
  channel: z.string().describe("as the workbook names it (Korean label, e.g. 앱푸시)"),
  channel_code: z
    .string()
    .nullable()
    .describe("the same channel's code as campaign results name it (app_push); null: unknown"),
  branch: z.string(),
  node_id: z.string(),
  totals: metricValues,
  days: z.number().int(),
  sheet: z.string().nullable(),
  trend: z
    .object({
      metric: z.string(),
      best_day: z.object({ date: z.string(), value: z.number() }),
      worst_day: z.object({ date: z.string(), value: z.number() }),
      first_half_average: z.number(),
      second_half_average: z.number(),
      direction: z.enum(["up", "down", "flat"]),
    })
    .nullable(),
  mismatches: z.array(z.object({ metric: z.string(), summary: z.number(), daily_sum: z.number() })),
});

export const scenarioSummaryOutputSchema = z.object({
  kind: z.literal("scenario_daily_metrics"),
  summary: z.string(),
  nodes: z.array(scenarioNodeSchema),
  file: z.object({ path: z.string(), bytes: z.number().int() }),
  metric_columns: z.array(z.string()),
  totals: metricValues,
  branches: z.array(
    z.object({
      parent: z.string().describe("branch path above the split; empty for the top level"),
      arms: z.array(
        z.object({
          branch: z.string(),
          sends: z.number(),
          open_rate: z.number().describe("오픈 수(건) / 발송 수(건)"),
          conversion_rate: z.number().describe("전환 수(건) / 오픈 수(건)"),
          send_users: z.number().describe("발송 수(명), summed over the arm's nodes"),
          open_users: z.number().describe("오픈 수(명), summed over the arm's nodes"),
          open_rate_users: z
            .number()
            .describe("open_users / send_users: the rate ranked and tested"),
        }),
      ),
      leader: z
        .string()
        .nullable()
        .describe("arm with the highest open_rate_users; null on a tie or with no sends"),
      metric: z.literal("open_rate_users").describe("the rate the arms are ranked and tested on"),
      p_value: z
        .number()
        .nullable()
        .describe("two-proportion z-test of the two arms; null with more than two arms or no data"),
      significant: z.boolean().describe("p_value < 0.05"),
      verdict: z.string(),
    }),
  ),
  warnings: z.array(z.string()),
  daily: z
    .object({
      dates: z.array(z.string()).describe("the days shown, oldest first (the last ones if cut)"),
      series: z.array(
        z.object({
          number: z.number().int(),
          node_id: z.string(),
          sends: z.array(z.number().nullable()).describe("발송 수(건) per date; null: no row"),
          opens: z.array(z.number().nullable()).describe("오픈 수(건) per date"),
          conversions: z.array(z.number().nullable()).describe("전환 수(건) per date"),
        }),
      ),
      nodes_not_shown: z.number().int().describe("nodes left out, fewest sends first"),
      days_not_shown: z.number().int().describe("earlier days left out"),
    })
    .describe("daily trend of the nodes with the most sends, for charts"),
});
export type ScenarioSummary = z.infer<typeof scenarioSummaryOutputSchema>;
export type ScenarioNode = z.infer<typeof scenarioNodeSchema>;

export const summaryOutputSchema = z.discriminatedUnion("kind", [
  campaignSummaryOutputSchema,
  scenarioSummaryOutputSchema,
]);
export type SummaryResult = CampaignSummary | ScenarioSummary;
