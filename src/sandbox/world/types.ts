import type {
  MetricColumn,
  MetricsCampaign,
  MetricsResponse,
  MetricsTask,
  RecommendBody,
  ScheduleType,
} from "../spec.js";

/**
 * The sandbox's synthetic world: everything the service would know about one application.
 * Deterministic from (seed, now). The HTTP layer (src/sandbox/*.ts) only reads it.
 *
 * Times are epoch milliseconds; the application's time zone is `world.timeZone` (Asia/Seoul).
 */

export interface WorldOptions {
  seed: number;
  /** The sandbox clock's "now" in epoch ms; all data lies before it. */
  now: number;
  /** The `huge_sends` campaign as an A/B test with a control group (see SandboxOptions). */
  hugeAbTest?: boolean;
}

export type Channel =
  | "app_push"
  | "alimtalk"
  | "friendtalk"
  | "brand_message"
  | "sms"
  | "rcs"
  | "email";

/**
 * How a campaign behaves on export:
 * - `normal`: exports complete;
 * - `failing_export`: its export jobs end `failed`;
 * - `not_ready`: every round is still aggregating (create gives `ResourceNotReady`);
 * - `huge_sends`: over MAX_SENDS_PER_EXPORT sends over its whole range; rows are generated only when exported;
 * - `many_rounds`: over MAX_ROUNDS_PER_EXPORT rounds over its whole range (A/B groups counted separately).
 */
export type CampaignRole = "normal" | "failing_export" | "not_ready" | "huge_sends" | "many_rounds";

export interface SandboxCampaign {
  _id: string;
  name: string;
  tags: string[];
  schedule_type: ScheduleType;
  /** Its `condition`, where set, is one the sandbox's conversions all satisfy. */
  conversion: MetricsCampaign["conversion"];
  is_ab_test: boolean;
  channel: Channel;
  role: CampaignRole;
  /** Ordered by scheduled_at ascending. */
  tasks: SandboxTask[];
}

export interface SandboxTask {
  _id: string;
  campaign_id: string;
  scheduled_at: number;
  sent_at: number;
  channel: Channel;
  /** One per A/B group (`그룹A`, `그룹B`, `대조군`), or a single round with group `""`. */
  rounds: SandboxRound[];
  /** Performance aggregation finished; unfinished rounds are left out of exports. */
  aggregated: boolean;
  /** Sending cost of the whole task. */
  cost: { amount: number; currency: string };
}

export interface SandboxRound {
  group: string;
  /** Send records in this round: `message_sent` rows, or `control_assigned` rows for the control group. */
  records: number;
  isControl: boolean;
}

/** One CSV row of spec 2.4, before formatting. Times are epoch ms; empty strings are empty cells. */
export interface CampaignRow {
  task_id: string;
  scheduled_at: number;
  group: string;
  event_type: string;
  user_id: string;
  platform_user_id: string;
  captured_at: number;
  channel: string;
  error_code: string;
  error_message: string;
  event_properties: string;
  custom_event_properties: string;
  internal_event_properties: string;
}

export interface ScenarioNode {
  /** Flow-order number, the `#` column and the daily sheet's `#N`. */
  number: number;
  /** Korean channel label of spec 2.5 (앱푸시, 알림톡, ...). */
  channel: string;
  /** A/B branch like `A`, `B·A`; empty outside a branch or after a merge. */
  branch: string;
  node_id: string;
}

export type ScenarioMetrics = Record<MetricColumn, number>;

export interface ScenarioDay {
  /** `YYYY-MM-DD` in the application's time zone. */
  date: string;
  metrics: ScenarioMetrics;
}

export interface ScenarioNodeReport {
  node: ScenarioNode;
  /** Summed over the period; ratios recomputed from the sums (0 for a 0 denominator). */
  summary: ScenarioMetrics;
  /** Days with sends only, ascending. */
  days: ScenarioDay[];
}

export interface SandboxScenario {
  _id: string;
  name: string;
  nodes: ScenarioNode[];
}

export type SlotKind = "personalized" | "co_viewed" | "similar" | "popular";

export interface SandboxSlot {
  key: string;
  state: "active" | "inactive" | "temporary";
  kind: SlotKind;
  /** co_viewed/similar: input products; `behavior` means an empty item_ids uses the user's latest product. */
  input: "none" | "items" | "behavior";
  /** Milliseconds after sandbox start during which the candidate cache is warming (412). */
  warmupMs: number;
}

export interface Product {
  id: string;
  name: string;
  category_id: string;
  brand_id: string;
  price: number;
}

export type RecommendOutcome =
  | { status: 200; item_ids: string[]; metadata: Record<string, unknown> }
  | { status: 404 }
  | { status: 412 };

export interface World {
  readonly applicationId: string;
  readonly timeZone: string;
  readonly now: number;
  readonly products: readonly Product[];
  readonly campaigns: readonly SandboxCampaign[];
  readonly scenarios: readonly SandboxScenario[];
  readonly slots: readonly SandboxSlot[];
  /** Known platform_user_ids with behaviour data (for examples and tests). */
  readonly sampleUserIds: readonly string[];

  campaign(id: string): SandboxCampaign | undefined;
  scenario(id: string): SandboxScenario | undefined;

  /**
   * Streams the rows of one round in file order (each send record's rows together, then the
   * record's events). Generated on the fly, deterministic, bounded memory.
   */
  roundRows(task: SandboxTask, round: SandboxRound): Iterable<CampaignRow>;

  /** The metrics-endpoint task object, computed from the same rows as the export (cached). */
  taskMetrics(task: SandboxTask): MetricsTask;

  /** Spec 4.4 response for tasks with from <= scheduled_at < to, optionally one schedule type. */
  campaignMetrics(from: number, to: number, scheduleType?: ScheduleType): MetricsResponse;

  /** Daily report for the dates `fromDate`..`toDate` (inclusive, `YYYY-MM-DD` in the app zone). */
  scenarioReport(scenario: SandboxScenario, fromDate: string, toDate: string): ScenarioNodeReport[];

  /** Recommend for a slot; `sinceStartMs` is the time since the sandbox started (cache warm-up). */
  recommend(slotKey: string, request: RecommendBody, sinceStartMs: number): RecommendOutcome;
}
