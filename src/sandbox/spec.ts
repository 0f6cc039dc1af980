/**
 * The sandbox's own reading of the service spec (spec/service-api.md): names, limits and shapes,
 * written from the spec rather than imported from the client in src/api/. A double that borrowed
 * the client's constants and schemas would agree with any misreading of the spec the client
 * makes; with its own copy, the two can disagree and the client's tests against the sandbox fail.
 */

/** Section 2.3, `type`. */
export const EXPORT_TYPES = ["campaign_event_data", "scenario_daily_metrics"] as const;
export type ExportType = (typeof EXPORT_TYPES)[number];

/** Section 3.1. */
export type ExportStatus = "triggered" | "processing" | "completed" | "failed";

/** Section 2.6 `schedule_type`, section 4.4 `campaign_schedule_type`. */
export const SCHEDULE_TYPES = ["once", "recurring", "api_trigger"] as const;
export type ScheduleType = (typeof SCHEDULE_TYPES)[number];

/** Section 8: export job creations per application. */
export const CREATE_LIMIT = 10;
export const CREATE_WINDOW_SECONDS = 600;

/** Section 8: one campaign export's range. */
export const MAX_SENDS_PER_EXPORT = 2_000_000;
export const MAX_ROUNDS_PER_EXPORT = 120;

/** Section 8: a download URL's validity from its creation. */
export const DOWNLOAD_URL_HOURS = 24;

/** Section 8: the metrics window. */
export const METRICS_WINDOW_DAYS = 180;

/** Section 8: recommend `limit`. */
export const RECOMMEND_LIMIT = { min: 1, max: 1000, default: 10 } as const;

/** Section 2.4: the campaign CSV's columns, in file order. */
export const CSV_COLUMNS = [
  "task_id",
  "scheduled_at",
  "group",
  "event_type",
  "user_id",
  "platform_user_id",
  "captured_at",
  "channel",
  "error_code",
  "error_message",
  "event_properties",
  "custom_event_properties",
  "internal_event_properties",
] as const;

/** Section 2.5: the summary sheet's first four columns. */
export const SUMMARY_LEAD_COLUMNS = ["#", "채널", "A/B 테스트 분기", "메시지 노드 ID"] as const;

/** Section 2.5: the metric columns shared by the summary and the daily sheets, in order. */
export const METRIC_COLUMNS = [
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
export type MetricColumn = (typeof METRIC_COLUMNS)[number];

/** Section 2.1: a recommend request's body, as the sandbox reads it. */
export interface RecommendBody {
  platform_user_id?: string;
  item_ids?: string[];
  category_id?: string;
  brand_id?: string;
  limit?: number;
  offset?: number;
}

/** Section 2.6: a task (send round) as the metrics endpoint returns it. */
export interface MetricsTask {
  _id: string;
  campaign_id: string;
  scheduled_at: string;
  sent_at: string;
  channel: string;
  sent_count: number;
  received_count: number;
  open_count: number;
  click_count: number;
  click_target_counts: { click_target: string; count: number; user_count: number }[];
  purchase_count: number;
  purchase_count_by_click: number;
  purchase_count_by_open: number;
  purchase_count_by_received: number;
  revenue: number;
  revenue_currency: string;
  revenue_by_click: { value: number; currency: string };
  revenue_by_open: { value: number; currency: string };
  revenue_by_received: { value: number; currency: string };
  cost: number;
  cost_currency: string;
  sent_user_count: number;
  received_user_count: number;
  open_user_count: number;
  click_user_count: number;
  purchase_user_count_by_click: number;
  purchase_user_count_by_open: number;
  purchase_user_count_by_received: number;
  open_rate: number;
  conversion_rate: number;
  roas: number;
}

/** Section 2.6: a campaign object. */
export interface MetricsCampaign {
  _id: string;
  name: string;
  tags: string[];
  schedule_type: ScheduleType;
  conversion: {
    event_type: string;
    window_unit: "h" | "d";
    window_amount: number;
    /** Optional; its structure is not shown. */
    condition?: Record<string, unknown>;
  };
  is_ab_test: boolean;
  tasks: MetricsTask[];
}

/** Section 2.6: the response's top level. */
export interface MetricsResponse {
  campaigns: MetricsCampaign[];
}
