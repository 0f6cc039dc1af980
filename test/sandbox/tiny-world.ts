import type { MetricsResponse, MetricsTask } from "../../src/api/schemas.js";
import type {
  CampaignRow,
  SandboxCampaign,
  SandboxRound,
  SandboxTask,
  ScenarioNodeReport,
  World,
} from "../../src/sandbox/world/types.js";

/**
 * A hand-made world for tests of the HTTP layer alone: one campaign with two daily tasks of
 * three rounds (그룹A, 그룹B, 대조군), rows with a multi-line quoted error message.
 */
export const TINY_NOW = Date.parse("2024-06-15T03:00:00Z");
const DAY = 86_400_000;

function task(id: string, scheduledAt: number): SandboxTask {
  return {
    _id: id,
    campaign_id: "cmp_tiny",
    scheduled_at: scheduledAt,
    sent_at: scheduledAt,
    channel: "alimtalk",
    aggregated: true,
    cost: { amount: 100, currency: "KRW" },
    rounds: [
      { group: "그룹A", records: 2, isControl: false },
      { group: "그룹B", records: 1, isControl: false },
      { group: "대조군", records: 1, isControl: true },
    ],
  };
}

const campaign: SandboxCampaign = {
  _id: "cmp_tiny",
  name: "작은 캠페인",
  tags: [],
  schedule_type: "once",
  conversion: { event_type: "purchase", window_unit: "d", window_amount: 1 },
  is_ab_test: true,
  channel: "alimtalk",
  role: "normal",
  // 2024-06-10 00:30 KST and 2024-06-11 00:30 KST.
  tasks: [
    task("tsk_1", Date.parse("2024-06-09T15:30:00Z")),
    task("tsk_2", Date.parse("2024-06-10T15:30:00Z")),
  ],
};

function* rows(t: SandboxTask, round: SandboxRound): Iterable<CampaignRow> {
  for (let i = 0; i < round.records; i += 1) {
    const base: CampaignRow = {
      task_id: t._id,
      scheduled_at: t.scheduled_at,
      group: round.group,
      event_type: round.isControl ? "control_assigned" : "message_sent",
      user_id: `u_${i}`,
      platform_user_id: `pu_${i}`,
      captured_at: t.scheduled_at + 1000,
      channel: round.isControl ? "control" : "alimtalk",
      error_code: "",
      error_message: "",
      event_properties: "{}",
      custom_event_properties: "{}",
      internal_event_properties: "{}",
    };
    yield base;
    if (!round.isControl) {
      yield i === 0
        ? {
            ...base,
            event_type: "message_failed",
            error_code: "E1",
            error_message: 'line "a",\nline b',
          }
        : { ...base, event_type: "message_received", captured_at: t.scheduled_at + DAY };
    }
  }
}

export function tinyWorld(): World {
  return {
    applicationId: "tiny-app",
    timeZone: "Asia/Seoul",
    now: TINY_NOW,
    products: [],
    campaigns: [campaign],
    scenarios: [{ _id: "scn_tiny", name: "작은 시나리오", nodes: [] }],
    slots: [{ key: "slot_a", state: "active", kind: "popular", input: "none", warmupMs: 0 }],
    sampleUserIds: ["pu_0"],
    campaign: (id) => (id === campaign._id ? campaign : undefined),
    scenario: (id) =>
      id === "scn_tiny" ? { _id: "scn_tiny", name: "작은 시나리오", nodes: [] } : undefined,
    roundRows: rows,
    taskMetrics: () => ({}) as MetricsTask,
    campaignMetrics: (): MetricsResponse => ({ campaigns: [] }),
    scenarioReport: (): ScenarioNodeReport[] => [],
    recommend: (slotKey) =>
      slotKey === "slot_a" ? { status: 200, item_ids: ["p1"], metadata: {} } : { status: 404 },
  };
}
