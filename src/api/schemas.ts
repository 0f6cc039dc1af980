import { z } from "zod";
import { RECOMMEND_LIMIT_MAX, RECOMMEND_LIMIT_MIN } from "./limits.js";

/**
 * Zod schemas written from spec section 2. Objects are loose: fields the service adds later pass
 * through untouched, while a missing required field fails with its path.
 */

export const EXPORT_TYPES = ["campaign_event_data", "scenario_daily_metrics"] as const;
export type ExportType = (typeof EXPORT_TYPES)[number];

export const EXPORT_STATUSES = ["triggered", "processing", "completed", "failed"] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];

/** A job the service is still working on (a later poll may change it). */
export function isRunning(status: string): boolean {
  return status === "triggered" || status === "processing";
}

/** The campaign or scenario an export job or request is about, whichever its type names. */
export function targetIdOf(x: {
  type: string;
  campaign_id?: string | undefined;
  scenario_id?: string | undefined;
}): string | undefined {
  return x.type === "campaign_event_data" ? x.campaign_id : x.scenario_id;
}

/** A job that will not change any more: completed or failed. */
export function isTerminal(status: string): boolean {
  return status === "completed" || status === "failed";
}

export const SCHEDULE_TYPES = ["once", "recurring", "api_trigger"] as const;
export type ScheduleType = (typeof SCHEDULE_TYPES)[number];

// ---- 2.1 / 2.2 recommend ----

export const recommendRequestSchema = z.object({
  platform_user_id: z.string().min(1).optional(),
  item_ids: z.array(z.string().min(1)).optional(),
  category_id: z.string().min(1).optional(),
  brand_id: z.string().min(1).optional(),
  limit: z.number().int().min(RECOMMEND_LIMIT_MIN).max(RECOMMEND_LIMIT_MAX).optional(),
  offset: z.number().int().min(0).optional(),
});
export type RecommendRequest = z.infer<typeof recommendRequestSchema>;

export const recommendResponseSchema = z.looseObject({
  item_ids: z.array(z.string()),
  // Contents not shown in the spec; a missing object is read as empty rather than an error.
  metadata: z.record(z.string(), z.unknown()).default({}),
});
export type RecommendResponse = z.infer<typeof recommendResponseSchema>;

// ---- 2.3 export job ----

const isoDateTime = z.string().min(1);

export const exportJobSchema = z
  .looseObject({
    _id: z.string().min(1),
    application_id: z.string(),
    type: z.enum(EXPORT_TYPES),
    status: z.enum(EXPORT_STATUSES),
    campaign_id: z.string().optional(),
    scenario_id: z.string().optional(),
    from: isoDateTime.optional(),
    to: isoDateTime.optional(),
    file_name: z.string().optional(),
    file_ext: z.string().optional(),
    file_size: z.number().nonnegative().optional(),
    download_url: z.string().optional(),
    download_url_expires_at: isoDateTime.optional(),
    created_at: isoDateTime,
    updated_at: isoDateTime,
  })
  .superRefine((job, ctx) => {
    if (job.status !== "completed") return;
    for (const field of [
      "file_name",
      "file_ext",
      "file_size",
      "download_url",
      "download_url_expires_at",
    ] as const) {
      if (job[field] === undefined) {
        ctx.addIssue({
          code: "custom",
          path: [field],
          message: `${field} is required when status is completed`,
        });
      }
    }
  });
export type ExportJob = z.infer<typeof exportJobSchema>;

export const createCampaignExportSchema = z.object({
  type: z.literal("campaign_event_data"),
  campaign_id: z.string().min(1),
  from: isoDateTime.optional(),
  to: isoDateTime.optional(),
});
export const createScenarioExportSchema = z.object({
  type: z.literal("scenario_daily_metrics"),
  scenario_id: z.string().min(1),
  from: isoDateTime,
  to: isoDateTime,
});
export const createExportJobSchema = z.discriminatedUnion("type", [
  createCampaignExportSchema,
  createScenarioExportSchema,
]);
export type CreateExportJobRequest = z.infer<typeof createExportJobSchema>;

// ---- 2.6 campaign metrics ----

const count = z.number();
const money = z.looseObject({ value: z.number(), currency: z.string() });

export const clickTargetCountSchema = z.looseObject({
  click_target: z.string(),
  count: z.number(),
  user_count: z.number(),
});

export const metricsTaskSchema = z.looseObject({
  _id: z.string().min(1),
  campaign_id: z.string(),
  scheduled_at: isoDateTime,
  // A round that has not gone out yet plausibly has no send time; tolerated as null or absent.
  sent_at: isoDateTime.nullable().optional(),
  channel: z.string(),
  sent_count: count,
  received_count: count,
  open_count: count,
  click_count: count,
  click_target_counts: z.array(clickTargetCountSchema).default([]),
  purchase_count: count,
  purchase_count_by_click: count,
  purchase_count_by_open: count,
  purchase_count_by_received: count,
  revenue: z.number(),
  revenue_currency: z.string(),
  revenue_by_click: money,
  revenue_by_open: money,
  revenue_by_received: money,
  cost: z.number(),
  cost_currency: z.string(),
  sent_user_count: count,
  received_user_count: count,
  open_user_count: count,
  click_user_count: count,
  purchase_user_count_by_click: count,
  purchase_user_count_by_open: count,
  purchase_user_count_by_received: count,
  // Ratios with a zero denominator may plausibly come back as null; the formulas are not shown.
  open_rate: z.number().nullable(),
  conversion_rate: z.number().nullable(),
  roas: z.number().nullable(),
});
export type MetricsTask = z.infer<typeof metricsTaskSchema>;

export const conversionSettingSchema = z.looseObject({
  event_type: z.string(),
  window_unit: z.string(),
  window_amount: z.number(),
  // Structure not shown in the spec.
  condition: z.unknown().optional(),
});

export const metricsCampaignSchema = z.looseObject({
  _id: z.string().min(1),
  name: z.string(),
  tags: z.array(z.string()).default([]),
  // Kept as a string: a kind the spec does not list yet should not break reporting.
  schedule_type: z.string(),
  conversion: conversionSettingSchema,
  is_ab_test: z.boolean(),
  tasks: z.array(metricsTaskSchema),
});
export type MetricsCampaign = z.infer<typeof metricsCampaignSchema>;

export const metricsResponseSchema = z.looseObject({
  campaigns: z.array(metricsCampaignSchema),
});
export type MetricsResponse = z.infer<typeof metricsResponseSchema>;

export interface MetricsQuery {
  task_from: string;
  task_to: string;
  campaign_schedule_type?: ScheduleType;
}

// ---- 2.4 / 2.5 export file layouts (shared by the sandbox writers and the analysis) ----

export { CAMPAIGN_CSV_COLUMNS } from "./csv-columns.js";

export const SCENARIO_SUMMARY_LEAD_COLUMNS = [
  "#",
  "채널",
  "A/B 테스트 분기",
  "메시지 노드 ID",
] as const;

export const SCENARIO_METRIC_COLUMNS = [
  "발송 수(건)",
  "발송 수(명)",
  "오픈 수(건)",
  "오픈 수(명)",
  "오픈율(건)",
  "오픈율(명)",
  "전환 수(건)",
  "전환 수(명)",
  "전환율(건)",
  "전환율(명)",
  "전환 수익",
  "집행 비용",
  "ROAS",
  "객단가",
  "CAC",
] as const;
export type ScenarioMetricColumn = (typeof SCENARIO_METRIC_COLUMNS)[number];

export const SCENARIO_CHANNELS = [
  "앱푸시",
  "알림톡",
  "친구톡",
  "브랜드 메시지",
  "SMS",
  "RCS",
  "이메일",
] as const;
