import { describe, expect, it } from "vitest";
import { selectRounds } from "../../src/sandbox/export-jobs.js";
import { startSandbox } from "../../src/sandbox/index.js";
import { createWorld } from "../../src/sandbox/world/index.js";
import type { SandboxCampaign, SandboxTask, World } from "../../src/sandbox/world/types.js";
import { client, manualClock, TEST_NOW } from "./support.js";

// Spec 8, campaign export size: at most 2,000,000 sends and at most 120 rounds, A/B groups
// counted separately. The boundaries are computed from the world's own round sizes.
const kstDate = (ms: number) => new Date(ms + 9 * 3_600_000).toISOString().slice(0, 10);

/** The dated body exporting tasks[first..last] of a daily campaign. */
function range(campaign: SandboxCampaign, first: number, last: number) {
  const from = campaign.tasks[first] as SandboxTask;
  const to = campaign.tasks[last] as SandboxTask;
  return {
    type: "campaign_event_data",
    campaign_id: campaign._id,
    from: kstDate(from.scheduled_at),
    to: kstDate(to.scheduled_at),
  };
}

describe("LimitExceeded boundaries (spec 8)", () => {
  it("accepts exactly 120 rounds and 2,000,000 sends, refuses one round more", async () => {
    const clock = manualClock();
    // Its own sandbox, closed at once: accepted jobs start writing large files in the background.
    const sandbox = await startSandbox({ now: TEST_NOW, jobSeconds: 0, clock: clock.read });
    try {
      const api = client(sandbox);
      const create = async (body: unknown) => {
        const res = await api.createJob(body);
        clock.advance(61_000);
        return res;
      };
      const byRole = (role: string) =>
        sandbox.world.campaigns.find((c) => c.role === role) as SandboxCampaign;

      // many_rounds: daily A/B tasks of two send groups, each task on its own KST day.
      const many = byRole("many_rounds");
      const days = many.tasks.map((t) => kstDate(t.scheduled_at));
      expect(new Set(days).size).toBe(many.tasks.length);
      expect(many.tasks.every((t) => t.aggregated && t.rounds.length === 2)).toBe(true);
      expect(many.tasks.length).toBeGreaterThanOrEqual(61);
      const at120 = await create(range(many, 0, 59));
      expect(at120.status).toBe(200);
      const at122 = await create(range(many, 0, 60));
      expect(at122.status).toBe(400);
      expect(at122.body.code).toBe("LimitExceeded");

      // huge_sends: the longest run of daily rounds from the first with <= 2,000,000 sends.
      const huge = byRole("huge_sends");
      expect(huge.tasks.every((t) => t.aggregated)).toBe(true);
      let sends = 0;
      let fit = 0;
      for (const task of huge.tasks) {
        const next = sends + task.rounds.reduce((sum, r) => sum + r.records, 0);
        if (next > 2_000_000) break;
        sends = next;
        fit += 1;
      }
      expect(fit).toBeGreaterThan(1);
      expect(fit).toBeLessThan(huge.tasks.length);
      expect(sends).toBeGreaterThan(1_800_000);
      const fits = await create(range(huge, 0, fit - 1));
      expect(fits.status).toBe(200);
      const over = await create(range(huge, 0, fit));
      expect(over.status).toBe(400);
      expect(over.body.code).toBe("LimitExceeded");
    } finally {
      await sandbox.close();
    }
  });
});

describe("rounds counted for the limit", () => {
  /** A hand-made A/B campaign with a control group: three rounds per task. */
  function abWithControl(tasks: number, id: string): SandboxCampaign {
    const list: SandboxTask[] = Array.from({ length: tasks }, (_, i) => ({
      _id: `tsk_${i}`,
      campaign_id: id,
      scheduled_at: 1_000 + i,
      sent_at: 1_000 + i,
      channel: "sms",
      aggregated: true,
      cost: { amount: 0, currency: "KRW" },
      rounds: [
        { group: "그룹A", records: 10, isControl: false },
        { group: "그룹B", records: 10, isControl: false },
        { group: "대조군", records: 3, isControl: true },
      ],
    }));
    return {
      _id: id,
      name: "ab",
      tags: [],
      schedule_type: "recurring",
      conversion: { event_type: "purchase", window_unit: "d", window_amount: 1 },
      is_ab_test: true,
      channel: "sms",
      role: "normal",
      tasks: list,
    };
  }

  it("counts the control group as a round (spec 2.4: task, scheduled_at and group)", async () => {
    const real = createWorld({ seed: 42, now: Date.parse(TEST_NOW) });
    const fakes = [abWithControl(40, "cmp_ab40"), abWithControl(41, "cmp_ab41")];
    const world: World = {
      ...real,
      campaign: (id) => fakes.find((c) => c._id === id) ?? real.campaign(id),
      // The accepted job writes its file in the background: rows of the hand-made tasks are none.
      roundRows: (task, round) =>
        fakes.some((c) => c._id === task.campaign_id) ? [] : real.roundRows(task, round),
    };
    const sandbox = await startSandbox({ now: TEST_NOW, jobSeconds: 0, world });
    try {
      const api = client(sandbox);
      // 40 tasks x 3 groups = 120 rounds: accepted.
      expect(
        (await api.createJob({ type: "campaign_event_data", campaign_id: "cmp_ab40" })).status,
      ).toBe(200);
      // 41 x 3 = 123 rounds, though only 82 of them send: refused.
      const over = await api.createJob({ type: "campaign_event_data", campaign_id: "cmp_ab41" });
      expect(over.status).toBe(400);
      expect(over.body.code).toBe("LimitExceeded");
    } finally {
      await sandbox.close();
    }
    const selection = selectRounds(fakes[1] as SandboxCampaign, -Infinity, Infinity);
    expect(selection.rounds).toHaveLength(123);
    expect(selection.sends).toBe(41 * 20);
  });
});
