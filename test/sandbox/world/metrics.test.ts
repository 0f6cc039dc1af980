import { describe, expect, it } from "vitest";
import type { SandboxCampaign, SandboxTask } from "../../../src/sandbox/world/types.js";
import { campaignWithRole, OPEN_EVENTS, taskRows, world } from "./fixtures.js";

const w = world();

/** The task fields recomputed from the export rows alone, as a reader of the CSV would. */
function countFromRows(campaign: SandboxCampaign, task: SandboxTask) {
  const openEvent = OPEN_EVENTS[campaign.channel];
  const conversion = campaign.conversion.event_type;
  const users = {
    sent: new Set<string>(),
    received: new Set<string>(),
    open: new Set<string>(),
    click: new Set<string>(),
    byClick: new Set<string>(),
    byOpen: new Set<string>(),
    byReceived: new Set<string>(),
  };
  const opened = new Set<string>();
  const clicked = new Set<string>();
  const received = new Set<string>();
  const targets = new Map<string, { count: number; users: Set<string> }>();
  const c = {
    sent: 0,
    received: 0,
    opens: 0,
    clicks: 0,
    purchases: 0,
    byClick: 0,
    byOpen: 0,
    byReceived: 0,
  };
  const money = { revenue: 0, byClick: 0, byOpen: 0, byReceived: 0 };
  for (const row of taskRows(w, task)) {
    // The contract's user: platform_user_id, or user_id where that is empty.
    const user = row.platform_user_id === "" ? `u:${row.user_id}` : `p:${row.platform_user_id}`;
    switch (row.event_type) {
      case "message_sent":
        c.sent++;
        users.sent.add(user);
        break;
      case "message_received":
        c.received++;
        users.received.add(user);
        received.add(user);
        break;
      case openEvent:
        c.opens++;
        users.open.add(user);
        opened.add(user);
        break;
      case "landing_clicked": {
        c.clicks++;
        users.click.add(user);
        clicked.add(user);
        const target = JSON.parse(row.event_properties).click_target as string;
        const entry = targets.get(target) ?? { count: 0, users: new Set<string>() };
        entry.count++;
        entry.users.add(user);
        targets.set(target, entry);
        break;
      }
      case conversion: {
        const payment = JSON.parse(row.event_properties) as { revenue: number; currency: string };
        const krw = payment.currency === "KRW" ? payment.revenue : 0;
        c.purchases++;
        money.revenue += krw;
        if (received.has(user)) {
          c.byReceived++;
          money.byReceived += krw;
          users.byReceived.add(user);
        }
        if (opened.has(user)) {
          c.byOpen++;
          money.byOpen += krw;
          users.byOpen.add(user);
        }
        if (clicked.has(user)) {
          c.byClick++;
          money.byClick += krw;
          users.byClick.add(user);
        }
        break;
      }
    }
  }
  return { c, money, users, targets };
}

function tasksToCheck(): { campaign: SandboxCampaign; task: SandboxTask }[] {
  const picks: { campaign: SandboxCampaign; task: SandboxTask }[] = [];
  for (const campaign of w.campaigns) {
    if (campaign.role === "huge_sends") continue;
    for (const task of [campaign.tasks[0], campaign.tasks[campaign.tasks.length - 1]]) {
      if (task !== undefined) picks.push({ campaign, task });
    }
  }
  return picks;
}

describe("taskMetrics (spec 2.6) agrees with the export rows", () => {
  for (const { campaign, task } of tasksToCheck()) {
    it(`${campaign.name} ${task._id}`, () => {
      const m = w.taskMetrics(task);
      const { c, money, users, targets } = countFromRows(campaign, task);
      expect(m).toMatchObject({
        _id: task._id,
        campaign_id: campaign._id,
        scheduled_at: new Date(task.scheduled_at).toISOString(),
        sent_at: new Date(task.sent_at).toISOString(),
        channel: campaign.channel,
        sent_count: c.sent,
        received_count: c.received,
        open_count: c.opens,
        click_count: c.clicks,
        purchase_count: c.purchases,
        purchase_count_by_click: c.byClick,
        purchase_count_by_open: c.byOpen,
        purchase_count_by_received: c.byReceived,
        revenue: money.revenue,
        revenue_currency: "KRW",
        revenue_by_click: { value: money.byClick, currency: "KRW" },
        revenue_by_open: { value: money.byOpen, currency: "KRW" },
        revenue_by_received: { value: money.byReceived, currency: "KRW" },
        cost: task.cost.amount,
        cost_currency: "KRW",
        sent_user_count: users.sent.size,
        received_user_count: users.received.size,
        open_user_count: users.open.size,
        click_user_count: users.click.size,
        purchase_user_count_by_click: users.byClick.size,
        purchase_user_count_by_open: users.byOpen.size,
        purchase_user_count_by_received: users.byReceived.size,
      });
      expect(m.sent_count).toBeGreaterThan(0);
      expect(
        [...m.click_target_counts].sort((a, b) => a.click_target.localeCompare(b.click_target)),
      ).toEqual(
        [...targets.entries()]
          .map(([click_target, e]) => ({ click_target, count: e.count, user_count: e.users.size }))
          .sort((a, b) => a.click_target.localeCompare(b.click_target)),
      );
      expect(m.open_rate).toBeCloseTo(c.received === 0 ? 0 : c.opens / c.received, 12);
      expect(m.conversion_rate).toBeCloseTo(c.opens === 0 ? 0 : c.byOpen / c.opens, 12);
      expect(m.roas).toBeCloseTo(task.cost.amount === 0 ? 0 : money.revenue / task.cost.amount, 9);
    });
  }

  it("gives 0 ratios for 0 denominators (free app push has roas 0)", () => {
    const push = w.campaigns.find((c) => c.channel === "app_push" && c.role === "normal");
    const task = push?.tasks[0];
    if (task === undefined) throw new Error("no push task");
    expect(task.cost.amount).toBe(0);
    expect(w.taskMetrics(task).roas).toBe(0);
  });

  it("caches per task and computes the huge campaign lazily", () => {
    const huge = campaignWithRole(w, "huge_sends");
    const task = huge.tasks[0] as SandboxTask;
    const first = w.taskMetrics(task);
    expect(w.taskMetrics(task)).toBe(first);
    const sends = task.rounds.reduce((s, r) => s + r.records, 0);
    expect(first.sent_count).toBe(sends);
    expect(first.received_count).toBeLessThan(sends);
    expect(first.received_count).toBeGreaterThan(sends * 0.8);
  });
});

describe("campaignMetrics (spec 4.4)", () => {
  const campaign = w.campaigns[0] as SandboxCampaign;
  const task = campaign.tasks[4] as SandboxTask;

  it("includes tasks with from <= scheduled_at < to and only those", () => {
    const exact = w.campaignMetrics(task.scheduled_at, task.scheduled_at + 1);
    const entry = exact.campaigns.find((c) => c._id === campaign._id);
    expect(entry?.tasks.map((t) => t._id)).toEqual([task._id]);
    const before = w.campaignMetrics(task.scheduled_at - 1000, task.scheduled_at);
    expect(before.campaigns.find((c) => c._id === campaign._id)).toBeUndefined();
    for (const c of exact.campaigns) {
      for (const t of c.tasks) expect(Date.parse(t.scheduled_at)).toBe(task.scheduled_at);
    }
  });

  it("returns campaign fields of spec 2.6 and every task in a wide window", () => {
    const all = w.campaignMetrics(0, w.now + 1);
    expect(all.campaigns.map((c) => c._id)).toEqual(w.campaigns.map((c) => c._id));
    const first = all.campaigns[0];
    expect(first).toMatchObject({
      _id: campaign._id,
      name: campaign.name,
      tags: campaign.tags,
      schedule_type: campaign.schedule_type,
      conversion: campaign.conversion,
      is_ab_test: campaign.is_ab_test,
    });
    expect(first?.tasks).toHaveLength(campaign.tasks.length);
  });

  it("filters by schedule type", () => {
    for (const type of ["once", "recurring", "api_trigger"] as const) {
      const result = w.campaignMetrics(0, w.now + 1, type);
      expect(result.campaigns.map((c) => c._id)).toEqual(
        w.campaigns.filter((c) => c.schedule_type === type).map((c) => c._id),
      );
    }
  });

  it("returns no campaigns for an empty window", () => {
    expect(w.campaignMetrics(w.now, w.now + 86_400_000).campaigns).toEqual([]);
  });
});

describe("conversion.condition (spec 2.6: structure not shown)", () => {
  it("is an opaque object on one campaign, and all its conversions satisfy it", () => {
    const withCondition = w.campaigns.filter((c) => c.conversion.condition !== undefined);
    expect(withCondition).toHaveLength(1);
    const campaign = withCondition[0] as SandboxCampaign;
    const served = w.campaignMetrics(0, w.now + 1).campaigns.find((c) => c._id === campaign._id);
    expect(served?.conversion.condition).toEqual(campaign.conversion.condition);
    const condition = campaign.conversion.condition as {
      filters: Array<{ key: string; operator: string; value?: number; values?: string[] }>;
    };
    let conversions = 0;
    for (const task of campaign.tasks.slice(-10)) {
      for (const row of taskRows(w, task)) {
        if (row.event_type !== campaign.conversion.event_type) continue;
        conversions++;
        const properties = JSON.parse(row.event_properties) as Record<string, unknown>;
        for (const filter of condition.filters) {
          const value = properties[filter.key];
          switch (filter.operator) {
            case "greater_than":
              expect(Number(value)).toBeGreaterThan(Number(filter.value));
              break;
            case "in":
              expect(filter.values).toContain(value);
              break;
            default:
              throw new Error(`unexpected operator ${filter.operator}`);
          }
        }
      }
    }
    expect(conversions).toBeGreaterThan(0);
  });
});
