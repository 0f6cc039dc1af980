import { describe, expect, it } from "vitest";
import type { MetricsCampaign, MetricsTask } from "../../src/api/schemas.js";
import { planCampaignExport } from "../../src/prompts/export-plan.js";
import { must } from "../helpers/must.js";

/**
 * The export plan of the campaign prompts on hand-made rounds: the limits of one export (spec 8),
 * the readiness of rounds, and ranges that cover the period given without gap or overlap.
 */

const NOW = Date.parse("2026-11-22T09:00:00+09:00");
const DAY = 86_400_000;
const ZONE = "Asia/Seoul";

function task(daysAgo: number, sent: number): MetricsTask {
  const at = new Date(NOW - daysAgo * DAY).toISOString();
  return {
    _id: `t${daysAgo}`,
    campaign_id: "c1",
    scheduled_at: at,
    sent_at: at,
    channel: "app_push",
    sent_count: sent,
  } as MetricsTask;
}

function campaign(tasks: MetricsTask[], options: { ab?: boolean; windowDays?: number } = {}) {
  return {
    _id: "c1",
    name: "c",
    tags: [],
    schedule_type: "recurring",
    conversion: {
      event_type: "purchase",
      window_unit: "d",
      window_amount: options.windowDays ?? 1,
    },
    is_ab_test: options.ab ?? false,
    tasks,
  } as MetricsCampaign;
}

const plan = (c: MetricsCampaign, from?: string, to?: string) =>
  planCampaignExport({
    campaignId: "c1",
    recent: { campaigns: [c], since: NOW - 180 * DAY },
    now: NOW,
    zone: ZONE,
    from,
    to,
  });

describe("planCampaignExport", () => {
  it("without dates: the 30 days up to the latest round expected aggregated", () => {
    // 1-day window + 24 h: the rounds of 1 day ago are not expected aggregated yet.
    const c = campaign([task(40, 10), task(20, 10), task(5, 10), task(1, 10)]);
    expect(plan(c)).toEqual({
      kind: "export",
      ranges: [{ from: "2026-10-19", to: "2026-11-17" }],
      defaulted: true,
    });
  });

  it("without dates: shortened to the newest days one export holds", () => {
    const c = campaign([10, 9, 8, 7, 6, 5, 4, 3].map((d) => task(d, 400_000)));
    const result = plan(c);
    // 2,000,000 sends at most: the newest five days.
    expect(result).toMatchObject({
      kind: "export",
      ranges: [{ from: "2026-11-15", to: "2026-11-19" }],
    });
    expect(result.kind === "export" && result.note).toContain("2,000,000 sends");
  });

  it("A/B rounds count three a task toward the 120 rounds", () => {
    const c = campaign(
      Array.from({ length: 29 }, (_, i) => task(i + 3, 10)),
      { ab: true },
    );
    const result = plan(c);
    // 29 tasks x 3 = 87 rounds: one export holds them.
    expect(result).toMatchObject({ kind: "export", ranges: [{ to: "2026-11-19" }] });
    const many = campaign(
      Array.from({ length: 60 }, (_, i) => task(i / 2 + 3, 10)),
      { ab: true },
    );
    const shortened = plan(many);
    // 40 tasks (120 rounds) at most: 20 days of two tasks a day.
    expect(shortened).toMatchObject({ ranges: [{ from: "2026-10-31", to: "2026-11-19" }] });
  });

  it("given dates over the limit: consecutive ranges from the first day to the last", () => {
    const c = campaign(Array.from({ length: 20 }, (_, i) => task(i + 2, 300_000)));
    const result = plan(c, "2026-10-01", "2026-11-21");
    if (result.kind !== "export") throw new Error(result.kind);
    expect(result.ranges[0]?.from).toBe("2026-10-01");
    expect(result.ranges.at(-1)?.to).toBe("2026-11-21");
    for (let i = 1; i < result.ranges.length; i++) {
      const before = Date.parse(must(result.ranges[i - 1], "range").to);
      expect(Date.parse(must(result.ranges[i], "range").from)).toBe(before + DAY);
    }
    // 6,000,000 sends, at most six 300,000-send days an export: 6 + 6 + 6 + 2.
    expect(result.ranges).toHaveLength(4);
  });

  it("rounds all before their conversion deadline: live metrics, not an export", () => {
    const c = campaign([task(1, 10), task(0.5, 10)], { windowDays: 7 });
    expect(plan(c)).toMatchObject({ kind: "not_aggregated", rounds: 2 });
    expect(plan(c, "2026-11-20", "2026-11-22")).toMatchObject({ kind: "not_aggregated" });
    // Past the deadline but not the grace: the service decides.
    const past = campaign([task(1.5, 10)]);
    expect(plan(past, "2026-11-20", "2026-11-21")).toMatchObject({ kind: "export" });
  });

  it("what cannot be checked is passed on as given", () => {
    const c = campaign([task(5, 10)]);
    expect(plan(c, undefined, "2026-11-20")).toEqual({ kind: "as_given", to: "2026-11-20" });
    expect(plan(c, "2025-01-01", "2026-11-20")).toMatchObject({ kind: "as_given" });
    expect(
      planCampaignExport({
        campaignId: "c1",
        recent: undefined,
        now: NOW,
        zone: ZONE,
        from: "2026-11-01",
        to: "2026-11-20",
      }),
    ).toEqual({ kind: "as_given", from: "2026-11-01", to: "2026-11-20" });
  });
});
