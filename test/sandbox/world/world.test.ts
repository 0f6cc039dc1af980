import { describe, expect, it } from "vitest";
import { createWorld } from "../../../src/sandbox/world/index.js";
import { campaignWithRole, NOW, SEED, taskRows, world } from "./fixtures.js";

const DAY = 86_400_000;

describe("world determinism", () => {
  it("builds the same data from the same seed and now", () => {
    const again = createWorld({ seed: SEED, now: NOW });
    const w = world();
    expect(JSON.stringify(again.campaigns)).toBe(JSON.stringify(w.campaigns));
    expect(JSON.stringify(again.products)).toBe(JSON.stringify(w.products));
    expect(JSON.stringify(again.scenarios)).toBe(JSON.stringify(w.scenarios));
    const task = w.campaigns[1]?.tasks[0];
    const taskAgain = again.campaigns[1]?.tasks[0];
    if (task === undefined || taskAgain === undefined) throw new Error("no task");
    expect(taskRows(again, taskAgain)).toEqual(taskRows(w, task));
  });

  it("differs with another seed", () => {
    const other = createWorld({ seed: SEED + 1, now: NOW });
    const w = world();
    expect(other.campaigns.map((c) => c._id)).not.toEqual(w.campaigns.map((c) => c._id));
    expect(other.products.map((p) => p.price)).not.toEqual(w.products.map((p) => p.price));
    const a = w.campaigns[0]?.tasks[0];
    const b = other.campaigns[0]?.tasks[0];
    if (a === undefined || b === undefined) throw new Error("no task");
    expect(taskRows(other, b).map((r) => r.platform_user_id)).not.toEqual(
      taskRows(w, a).map((r) => r.platform_user_id),
    );
  });

  it("regenerates a round identically on every read (streamable in any order)", () => {
    const w = world();
    const task = w.campaigns[0]?.tasks[3];
    const round = task?.rounds[0];
    const other = w.campaigns[1]?.tasks[0];
    const otherRound = other?.rounds[0];
    if (task === undefined || round === undefined) throw new Error("no round");
    if (other === undefined || otherRound === undefined) throw new Error("no other round");
    const first = [...w.roundRows(task, round)];
    expect(first.length).toBeGreaterThan(0);
    // Another round read in between must not shift this one's random stream.
    expect([...w.roundRows(other, otherRound)].length).toBeGreaterThan(0);
    expect([...w.roundRows(task, round)]).toEqual(first);
    // A fresh world that reads this round first, before any other, gives the same rows.
    const fresh = createWorld({ seed: SEED, now: NOW });
    const freshTask = fresh.campaigns[0]?.tasks[3];
    const freshRound = freshTask?.rounds[0];
    if (freshTask === undefined || freshRound === undefined) throw new Error("no fresh round");
    expect([...fresh.roundRows(freshTask, freshRound)]).toEqual(first);
  });
});

describe("world contents", () => {
  const w = world();

  it("has the application facts and a catalog", () => {
    expect(w.applicationId).toBe("sandbox-app");
    expect(w.timeZone).toBe("Asia/Seoul");
    expect(w.products.length).toBeGreaterThanOrEqual(250);
    expect(new Set(w.products.map((p) => p.category_id)).size).toBeGreaterThanOrEqual(5);
    expect(new Set(w.products.map((p) => p.brand_id)).size).toBeGreaterThanOrEqual(10);
    expect(w.products.every((p) => /[가-힣]/.test(p.name) && p.price > 0)).toBe(true);
    expect(w.sampleUserIds.length).toBeGreaterThan(0);
  });

  it("has campaigns of every schedule type, channel and role", () => {
    expect(w.campaigns.length).toBeGreaterThanOrEqual(20);
    expect(new Set(w.campaigns.map((c) => c.schedule_type))).toEqual(
      new Set(["once", "recurring", "api_trigger"]),
    );
    expect(new Set(w.campaigns.map((c) => c.channel))).toEqual(
      new Set(["app_push", "alimtalk", "friendtalk", "brand_message", "sms", "rcs", "email"]),
    );
    for (const role of ["failing_export", "not_ready", "huge_sends", "many_rounds"] as const) {
      expect(w.campaigns.filter((c) => c.role === role)).toHaveLength(1);
    }
    const ab = w.campaigns.filter((c) => c.is_ab_test);
    expect(ab.length).toBeGreaterThanOrEqual(3);
    for (const campaign of ab) {
      for (const task of campaign.tasks) {
        const groups = task.rounds.map((r) => r.group);
        expect(groups.slice(0, 2)).toEqual(["그룹A", "그룹B"]);
        expect(task.rounds.filter((r) => r.isControl).map((r) => r.group)).toEqual(
          groups.includes("대조군") ? ["대조군"] : [],
        );
      }
    }
    expect(ab.some((c) => c.tasks[0]?.rounds.some((r) => r.isControl))).toBe(true);
    for (const campaign of w.campaigns.filter((c) => !c.is_ab_test)) {
      for (const task of campaign.tasks) expect(task.rounds.map((r) => r.group)).toEqual([""]);
    }
  });

  it("spreads tasks over the six months before now, in order", () => {
    for (const campaign of w.campaigns) {
      expect(campaign._id).toMatch(/^cmp_/);
      let previous = -Infinity;
      for (const task of campaign.tasks) {
        expect(task.scheduled_at).toBeLessThan(NOW);
        expect(task.scheduled_at).toBeGreaterThan(NOW - 190 * DAY);
        expect(task.sent_at).toBeGreaterThanOrEqual(task.scheduled_at);
        expect(task.scheduled_at).toBeGreaterThanOrEqual(previous);
        previous = task.scheduled_at;
      }
    }
    const all = w.campaigns.flatMap((c) => c.tasks.map((t) => t.scheduled_at));
    expect(Math.min(...all)).toBeLessThan(NOW - 150 * DAY);
  });

  it("gives the role campaigns the sizes their export errors need", () => {
    const sends = (records: { records: number; isControl: boolean }[]) =>
      records.filter((r) => !r.isControl).reduce((s, r) => s + r.records, 0);
    const huge = campaignWithRole(w, "huge_sends");
    const hugeSends = huge.tasks.reduce((s, t) => s + sends(t.rounds), 0);
    expect(hugeSends).toBeGreaterThan(2_000_000);
    expect(huge.tasks.every((t) => t.aggregated)).toBe(true);
    expect(huge.tasks.slice(0, 10).reduce((s, t) => s + sends(t.rounds), 0)).toBeGreaterThan(
      1_000_000,
    );
    const many = campaignWithRole(w, "many_rounds");
    expect(many.tasks.reduce((s, t) => s + t.rounds.length, 0)).toBeGreaterThan(120);
    expect(many.tasks.every((t) => t.aggregated)).toBe(true);
    const notReady = campaignWithRole(w, "not_ready");
    expect(notReady.tasks.length).toBeGreaterThan(0);
    expect(notReady.tasks.every((t) => !t.aggregated)).toBe(true);
    expect(campaignWithRole(w, "failing_export").tasks.every((t) => t.aggregated)).toBe(true);
  });

  it("marks a round aggregated only once its conversion window has closed", () => {
    const rounds = w.campaigns
      .filter((c) => c.role === "normal")
      .flatMap((campaign) => {
        const unit = campaign.conversion.window_unit === "h" ? 3_600_000 : DAY;
        const windowMs = campaign.conversion.window_amount * unit;
        return campaign.tasks.map((task) => ({ task, closesAt: task.scheduled_at + windowMs }));
      });
    const aggregated = rounds.filter((r) => r.task.aggregated);
    const pending = rounds.filter((r) => !r.task.aggregated);
    expect(aggregated.length).toBeGreaterThan(0);
    expect(pending.length).toBeGreaterThan(0);
    for (const { closesAt } of aggregated) expect(closesAt).toBeLessThanOrEqual(NOW);
    // Aggregation follows the window's close within two hours.
    for (const { closesAt } of pending) expect(closesAt + 2 * 3_600_000).toBeGreaterThan(NOW);
  });

  it("finds campaigns and scenarios by id", () => {
    const campaign = w.campaigns[3];
    const scenario = w.scenarios[1];
    expect(campaign && w.campaign(campaign._id)).toBe(campaign);
    expect(scenario && w.scenario(scenario._id)).toBe(scenario);
    expect(w.campaign("cmp_missing")).toBeUndefined();
    expect(w.scenario("scn_missing")).toBeUndefined();
  });
});

describe("KST formatting", () => {
  it("formats epoch ms as the application's local date, like luxon does", async () => {
    const { DateTime } = await import("luxon");
    const { formatKstDate } = await import("../../../src/sandbox/world/index.js");
    for (const ms of [
      0,
      NOW,
      NOW + 54_321_987,
      Date.parse("2026-12-31T15:00:00Z"),
      Date.parse("2024-02-28T14:59:59.999Z"),
    ]) {
      const local = DateTime.fromMillis(ms, { zone: "Asia/Seoul" });
      expect(formatKstDate(ms)).toBe(local.toFormat("yyyy-MM-dd"));
    }
  });
});
