import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXPORT_AB_ROUNDS_PER_TASK, EXPORT_MAX_ROUNDS } from "../../../src/api/limits.js";
import { startSandbox } from "../../../src/sandbox/index.js";
import type { RunningSandbox } from "../../../src/sandbox/types.js";
import { createWorld } from "../../../src/sandbox/world/index.js";
import type { SandboxCampaign, SandboxTask, World } from "../../../src/sandbox/world/types.js";
import { must } from "../../helpers/must.js";
import { type Harness, SANDBOX_NOW, startHarness } from "../../helpers/tool-harness.js";

/**
 * An A/B test with a control group has three rounds per task (spec 2.4: task, scheduled_at and
 * group; 그룹A, 그룹B and 대조군), each counted toward the 120 rounds of one export (spec 8).
 * campaign_metrics' next step for such a campaign, over real HTTP to a sandbox that counts its
 * rounds so: 40 daily tasks (120 rounds) are one export the service accepts; 41 (123 rounds)
 * are split into exports it accepts, where one export of them all is refused.
 */

type MetricsCampaign = ReturnType<World["campaignMetrics"]>["campaigns"][number];

const DAY_MS = 86_400_000;
/** 2026-06-01 09:00 KST: the first task; one task a day after it, all long aggregated. */
const FIRST_TASK = Date.parse("2026-06-01T00:00:00Z");
const kstDay = (ms: number) => new Date(ms + 9 * 3_600_000).toISOString().slice(0, 10);

function abWithControl(id: string, tasks: number): SandboxCampaign {
  const list: SandboxTask[] = Array.from({ length: tasks }, (_, i) => ({
    _id: `${id}_t${i}`,
    campaign_id: id,
    scheduled_at: FIRST_TASK + i * DAY_MS,
    sent_at: FIRST_TASK + i * DAY_MS,
    channel: "sms",
    aggregated: true,
    cost: { amount: 0, currency: "KRW" },
    rounds: [
      { group: "그룹A", records: 10, isControl: false },
      { group: "그룹B", records: 10, isControl: false },
      { group: "대조군", records: 2, isControl: true },
    ],
  }));
  return {
    _id: id,
    name: `A/B ${tasks}`,
    tags: [],
    schedule_type: "recurring",
    conversion: { event_type: "purchase", window_unit: "d", window_amount: 1 },
    is_ab_test: true,
    channel: "sms",
    role: "normal",
    tasks: list,
  };
}

const FIT = abWithControl("cmp_ab_fit", EXPORT_MAX_ROUNDS / EXPORT_AB_ROUNDS_PER_TASK);
const OVER = abWithControl("cmp_ab_over", EXPORT_MAX_ROUNDS / EXPORT_AB_ROUNDS_PER_TASK + 1);
const FAKES = [FIT, OVER];

/** The real world with the two hand-made campaigns in it, for exports and for metrics. */
function worldWithFakes(): World {
  const real = createWorld({ seed: 42, now: Date.parse(SANDBOX_NOW) });
  const template = real.taskMetrics(
    must(
      real.campaigns.flatMap((c) => c.tasks).find((t) => t.aggregated),
      "an aggregated task",
    ),
  );
  const metricsOf = (campaign: SandboxCampaign, tasks: SandboxTask[]): MetricsCampaign => ({
    _id: campaign._id,
    name: campaign.name,
    tags: [],
    schedule_type: campaign.schedule_type,
    conversion: structuredClone(campaign.conversion),
    is_ab_test: true,
    tasks: tasks.map((t) => ({
      ...structuredClone(template),
      _id: t._id,
      campaign_id: campaign._id,
      channel: t.channel,
      scheduled_at: new Date(t.scheduled_at).toISOString(),
      sent_at: new Date(t.sent_at).toISOString(),
      sent_count: 20,
    })),
  });
  return {
    ...real,
    campaign: (id) => FAKES.find((c) => c._id === id) ?? real.campaign(id),
    // Accepted jobs write their files in the background: the hand-made rounds have no rows.
    roundRows: (task, round) =>
      FAKES.some((c) => c._id === task.campaign_id) ? [] : real.roundRows(task, round),
    campaignMetrics: (from, to, scheduleType) => {
      const answer = real.campaignMetrics(from, to, scheduleType);
      for (const campaign of FAKES) {
        const tasks = campaign.tasks.filter((t) => from <= t.scheduled_at && t.scheduled_at < to);
        if (tasks.length > 0) answer.campaigns.push(metricsOf(campaign, tasks));
      }
      return answer;
    },
  };
}

let sandbox: RunningSandbox;
let h: Harness;
beforeAll(async () => {
  sandbox = await startSandbox({ now: SANDBOX_NOW, jobSeconds: 0.3, world: worldWithFakes() });
  h = await startHarness({ sandbox });
});
afterAll(async () => {
  await h?.close();
  await sandbox?.close();
});

/** campaign_metrics' next calls for the campaign's whole span. */
async function nextExports(campaign: SandboxCampaign) {
  const r = await h.call("campaign_metrics", {
    task_from: kstDay(FIRST_TASK),
    task_to: kstDay(must(campaign.tasks.at(-1), "its last task").scheduled_at),
    campaign_ids: [campaign._id],
  });
  expect(r.isError, r.text).toBeFalsy();
  const calls = r.structured.next_calls as Array<{
    tool: string;
    arguments: { campaign_id: string; from: string; to: string };
  }>;
  expect(calls.every((c) => c.tool === "start_export")).toBe(true);
  return { text: r.text, ranges: calls.map((c) => c.arguments) };
}

async function startExport(args: Record<string, unknown>) {
  return h.call("start_export", { type: "campaign_event_data", wait_seconds: 0, ...args });
}

describe("an A/B campaign with a control group against the 120-round limit", () => {
  it("120 rounds (40 tasks) are one export, and the service accepts it", async () => {
    const { ranges } = await nextExports(FIT);
    expect(ranges).toHaveLength(1);
    const started = await startExport(must(ranges[0], "the one export"));
    expect(started.isError, started.text).toBeFalsy();
  });

  it("123 rounds (41 tasks) are split into exports the service accepts; one is refused", async () => {
    const { text, ranges } = await nextExports(OVER);
    expect(text).toContain("123 rounds (A/B send and control groups counted separately) > 120");
    expect(ranges.map((r) => [r.from, r.to])).toEqual([
      [kstDay(FIRST_TASK), kstDay(FIRST_TASK + 39 * DAY_MS)],
      [kstDay(FIRST_TASK + 40 * DAY_MS), kstDay(FIRST_TASK + 40 * DAY_MS)],
    ]);
    for (const range of ranges) {
      const started = await startExport(range);
      expect(started.isError, started.text).toBeFalsy();
    }
    // What the split spares: the whole span in one export is over the service's limit.
    const whole = await startExport({
      campaign_id: OVER._id,
      from: kstDay(FIRST_TASK),
      to: kstDay(FIRST_TASK + 40 * DAY_MS),
    });
    expect(whole.isError).toBe(true);
    expect(whole.text).toMatch(/LimitExceeded|too large|120 rounds/);
  });
});
