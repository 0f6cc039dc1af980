import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { must } from "../../helpers/must.js";
import { type Harness, startHarness } from "../../helpers/tool-harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

describe("campaign_metrics", () => {
  it("sums each campaign's tasks per the world's own task metrics, money per currency", async () => {
    const r = await h.call("campaign_metrics", {
      task_from: "2026-10-01",
      task_to: "2026-11-21",
      top_n: 500,
    });
    expect(r.isError).toBeFalsy();
    const from = Date.parse("2026-10-01T00:00:00+09:00");
    const to = Date.parse("2026-11-22T00:00:00+09:00");
    const world = h.sandbox.world;
    const expected = world.campaigns
      .map((c) => ({
        c,
        tasks: c.tasks.filter((t) => t.scheduled_at >= from && t.scheduled_at < to),
      }))
      .filter((x) => x.tasks.length > 0);
    const campaigns = r.structured.campaigns as Array<Record<string, unknown>>;
    expect(campaigns.length).toBe(expected.length);
    for (const { c, tasks } of expected) {
      const got = campaigns.find((x) => x._id === c._id);
      const metrics = tasks.map((t) => world.taskMetrics(t));
      expect(got?.task_count).toBe(tasks.length);
      expect(got?.sent_count).toBe(metrics.reduce((a, m) => a + m.sent_count, 0));
      expect(got?.open_count).toBe(metrics.reduce((a, m) => a + m.open_count, 0));
      const revenue: Record<string, number> = {};
      for (const m of metrics)
        revenue[m.revenue_currency] = (revenue[m.revenue_currency] ?? 0) + m.revenue;
      expect(got?.revenue).toEqual(revenue);
      const received = metrics.reduce((a, m) => a + m.received_count, 0);
      expect(got?.computed_open_rate).toBeCloseTo(
        received === 0 ? 0 : (got?.open_count as number) / received,
      );
    }
    const totals = r.structured.totals as Record<string, number>;
    expect(totals.sent_count).toBe(campaigns.reduce((a, c) => a + (c.sent_count as number), 0));
    const window = r.structured.window as Record<string, unknown>;
    expect(window.task_from).toBe("2026-10-01T00:00:00+09:00");
    expect(window.task_to).toBe("2026-11-22T00:00:00+09:00");
    expect((window.utc as Record<string, string>).from).toBe("2026-09-30T15:00:00.000Z");
    expect(r.structured.data_source).toBe("service");
    // Whole days: the same date-range words as the export tools.
    expect(r.structured.summary).toContain("rounds in 2026-10-01 to 2026-11-21 (inclusive, KST);");
  });

  it("splits a 400-day window into 180-day requests and merges campaigns once", async () => {
    const before = h.sandbox.faults.requestCounts.campaign_metrics;
    const r = await h.call("campaign_metrics", {
      task_from: "2025-10-18",
      task_to: "2026-11-21",
      top_n: 500,
      include_tasks: true,
    });
    expect(r.isError).toBeFalsy();
    expect(h.sandbox.faults.requestCounts.campaign_metrics - before).toBe(3);
    expect((r.structured.window as Record<string, number>).requests).toBe(3);
    const campaigns = r.structured.campaigns as Array<{ _id: string; task_count: number }>;
    expect(new Set(campaigns.map((c) => c._id)).size).toBe(campaigns.length);
    const from = Date.parse("2025-10-18T00:00:00+09:00");
    const to = Date.parse("2026-11-22T00:00:00+09:00");
    for (const c of campaigns) {
      const world = h.sandbox.world.campaign(c._id);
      const inWindow = world?.tasks.filter(
        (t) => t.scheduled_at >= from && t.scheduled_at < to,
      ).length;
      expect(c.task_count).toBe(inWindow);
    }
    const tasks = r.structured.tasks as Array<{ _id: string }>;
    expect(new Set(tasks.map((t) => t._id)).size).toBe(tasks.length);
  });

  it("filters by schedule type, tag and name, sorts and caps with a count of the rest", async () => {
    const r = await h.call("campaign_metrics", {
      task_from: "2026-06-01",
      task_to: "2026-11-21",
      campaign_schedule_type: "recurring",
      top_n: 2,
      sort_by: "sent",
    });
    const campaigns = r.structured.campaigns as Array<{
      schedule_type: string;
      sent_count: number;
    }>;
    expect(campaigns.length).toBe(2);
    expect(campaigns.every((c) => c.schedule_type === "recurring")).toBe(true);
    expect(must(campaigns[0], "first campaign").sent_count).toBeGreaterThanOrEqual(
      must(campaigns[1], "second campaign").sent_count,
    );
    const matched = r.structured.matched_campaigns as number;
    expect(r.structured.more_not_shown).toBe(matched - 2);
    // On the footnote's line, after one space.
    expect(r.text).toContain(
      `(as the service's conversion_rate). ${matched - 2} more not shown (raise top_n or filter).\n`,
    );

    const tagged = await h.call("campaign_metrics", {
      task_from: "2026-06-01",
      task_to: "2026-11-21",
      tag: "리포트",
    });
    const ids = (tagged.structured.campaigns as Array<{ tags: string[] }>).map((c) => c.tags);
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.every((tags) => tags.includes("리포트"))).toBe(true);
  });

  it("defaults to the last 30 days and rejects bad windows before any request", async () => {
    const r = await h.call("campaign_metrics", {});
    expect((r.structured.window as Record<string, string>).task_from).toBe(
      "2026-10-24T00:00:00+09:00",
    );
    const before = h.sandbox.faults.requestCounts.campaign_metrics;
    const bad = await h.call("campaign_metrics", {
      task_from: "2026-11-10",
      task_to: "2026-11-01",
    });
    expect(bad.isError).toBe(true);
    expect(bad.text).toContain("task_from");
    const badFormat = await h.call("campaign_metrics", { task_from: "last week" });
    expect(badFormat.isError).toBe(true);
    expect(badFormat.text).toContain("YYYY-MM-DD");
    const badTop = await h.call("campaign_metrics", { top_n: 0 });
    expect(badTop.isError).toBe(true);
    expect(badTop.text).toContain("top_n must be a whole number 1 to 500");
    expect(h.sandbox.faults.requestCounts.campaign_metrics).toBe(before);
  });

  it("computes conversion on the service's basis (purchases by open / opens) and marks A/B and channels", async () => {
    const r = await h.call("campaign_metrics", {
      task_from: "2026-10-01",
      task_to: "2026-11-21",
      top_n: 500,
    });
    const from = Date.parse("2026-10-01T00:00:00+09:00");
    const to = Date.parse("2026-11-22T00:00:00+09:00");
    const world = h.sandbox.world;
    const campaigns = r.structured.campaigns as Array<{
      _id: string;
      is_ab_test: boolean;
      channels: string[];
      computed_conversion_rate: number | null;
      purchase_count_by_open: number;
    }>;
    let differs = false;
    for (const got of campaigns) {
      const c = must(world.campaign(got._id), `campaign ${got._id} in the sandbox world`);
      const tasks = c.tasks.filter((t) => t.scheduled_at >= from && t.scheduled_at < to);
      const m = tasks.map((t) => world.taskMetrics(t));
      const byOpen = m.reduce((a, x) => a + x.purchase_count_by_open, 0);
      const opens = m.reduce((a, x) => a + x.open_count, 0);
      const all = m.reduce((a, x) => a + x.purchase_count, 0);
      expect(got.purchase_count_by_open).toBe(byOpen);
      // With no opens the rate is null, not 0 or NaN.
      expect(got.computed_conversion_rate, got._id).toEqual(
        opens === 0 ? null : expect.closeTo(byOpen / opens, 4),
      );
      if (all !== byOpen) differs = true;
      expect(got.channels).toEqual([...new Set(m.map((x) => x.channel))].sort());
    }
    // The world has control-group purchases somewhere, so the two bases really differ.
    expect(differs).toBe(true);
    const ab = campaigns.find((c) => c.is_ab_test);
    expect(ab).toBeDefined();
    const abRow = r.text.split("\n").find((l) => l.startsWith(`|${ab?._id}|`));
    expect(abRow).toContain("|A/B|");
  });

  it("splits the next step for a campaign over the export limit into ranges the service accepts", async () => {
    const huge = h.sandbox.world.campaigns.find((c) => c.role === "huge_sends");
    if (huge === undefined) throw new Error("no huge campaign in the sandbox world");
    const r = await h.call("campaign_metrics", {
      task_from: "2026-10-01",
      task_to: "2026-11-21",
      campaign_ids: [huge._id],
    });
    const sent = must(
      (r.structured.campaigns as Array<{ sent_count: number }>)[0],
      "campaign in the result",
    ).sent_count;
    expect(sent).toBeGreaterThan(2_000_000);
    // next_calls is the data form of next_step: the same calls, in order, as {tool, arguments}.
    const nextCalls = r.structured.next_calls as Array<{
      tool: string;
      arguments: { from: string; to: string; campaign_id: string };
    }>;
    expect(nextCalls.every((c) => c.tool === "start_export")).toBe(true);
    expect(r.structured.next_step).toBe(
      nextCalls.map((c) => `start_export ${JSON.stringify(c.arguments)}`).join(" then "),
    );
    const calls = nextCalls.map((c) => c.arguments);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(r.text).toContain("too large for one export");
    const kstDate = (ms: number) => new Date(ms + 9 * 3600_000).toISOString().slice(0, 10);
    let covered = 0;
    for (const c of calls) {
      const inRange = huge.tasks.filter((t) => {
        const d = kstDate(t.scheduled_at);
        return d >= c.from && d <= c.to;
      });
      covered += inRange.length;
      const sends = inRange.reduce((a, t) => a + h.sandbox.world.taskMetrics(t).sent_count, 0);
      expect(sends).toBeLessThanOrEqual(2_000_000);
      const started = await h.call("start_export", {
        type: "campaign_event_data",
        ...c,
        wait_seconds: 0,
      });
      expect(started.isError, started.text).toBeFalsy();
    }
    const from = Date.parse("2026-10-01T00:00:00+09:00");
    const to = Date.parse("2026-11-22T00:00:00+09:00");
    expect(covered).toBe(
      huge.tasks.filter((t) => t.scheduled_at >= from && t.scheduled_at < to).length,
    );
  });

  it("lists rounds newest first and says which are only in structuredContent and which were not returned", async () => {
    const r = await h.call("campaign_metrics", {
      task_from: "2025-10-18",
      task_to: "2026-11-21",
      top_n: 500,
      include_tasks: true,
    });
    const tasks = r.structured.tasks as Array<{ _id: string; scheduled_at: string }>;
    const notReturned = r.structured.tasks_not_shown as number;
    // 200 rounds returned, of which the result's token budget keeps the newest and says so.
    const cut = (r.structured.more as { omitted: Array<Record<string, unknown>> }).omitted;
    expect(r.structured.truncated).toBe(true);
    expect(cut).toContainEqual({ field: "tasks", shown: tasks.length, total: 200 });
    expect(r.text).toContain(`tasks ${tasks.length} of 200`);
    expect(notReturned).toBeGreaterThan(0);
    // The newest round of all matched campaigns is the first returned.
    const from = Date.parse("2025-10-18T00:00:00+09:00");
    const to = Date.parse("2026-11-22T00:00:00+09:00");
    const newest = Math.max(
      ...h.sandbox.world.campaigns.flatMap((c) =>
        c.tasks
          .filter((t) => t.scheduled_at >= from && t.scheduled_at < to)
          .map((t) => t.scheduled_at),
      ),
    );
    expect(Date.parse(must(tasks[0], "first round").scheduled_at)).toBe(newest);
    expect(r.text).toContain(`${200 - 30} older rounds in structuredContent.tasks only`);
    expect(r.text).toContain(
      `${notReturned.toLocaleString("en-US")} older rounds not returned at all`,
    );
    // KST wall-clock time of the first row, as in the CSV.
    expect(r.text).toContain(kstMinute(newest));
  });

  it("says 1 round, not 1 rounds", async () => {
    const from = Date.parse("2026-10-01T00:00:00+09:00");
    const to = Date.parse("2026-11-22T00:00:00+09:00");
    const single = h.sandbox.world.campaigns.find(
      (c) => c.tasks.filter((t) => t.scheduled_at >= from && t.scheduled_at < to).length === 1,
    );
    if (single === undefined) throw new Error("no campaign with one round in the window");
    const r = await h.call("campaign_metrics", {
      task_from: "2026-10-01",
      task_to: "2026-11-21",
      campaign_ids: [single._id],
    });
    expect(r.text).toContain("Totals: 1 round, ");
  });
});

function kstMinute(ms: number): string {
  return new Date(ms + 9 * 3600_000).toISOString().slice(0, 16).replace("T", " ");
}
