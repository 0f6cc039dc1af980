import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildReport } from "../../../src/report/model.js";
import { startSandbox } from "../../../src/sandbox/index.js";
import type { MetricsResponse } from "../../../src/sandbox/spec.js";
import { createWorld, type World } from "../../../src/sandbox/world/index.js";
import {
  type Harness,
  SANDBOX_NOW,
  startHarness,
  type ToolResult,
} from "../../helpers/tool-harness.js";

/**
 * campaign_metrics with compare_to, through the SDK client against the embedded sandbox: the
 * comparison must equal what a separate call over the other window says, and the change is
 * worked out here from the two separate calls, not by the tool's code.
 */

type Sums = Record<string, unknown> & {
  revenue: Record<string, number>;
  cost: Record<string, number>;
};
type Change = {
  previous: number | null;
  current: number | null;
  delta: number | null;
  pct: number | null;
};

const COUNTS = ["sent_count", "received_count", "open_count", "click_count", "purchase_count"];
const RATES = ["computed_open_rate", "computed_click_rate", "computed_conversion_rate"];
const SUM_KEYS = [
  "task_count",
  ...COUNTS,
  "purchase_count_by_open",
  "revenue",
  "cost",
  "rounds_aggregating",
  ...RATES,
];

/** The change a reader would work out from two separate results' totals. */
function expectChange(got: Change, previous: number | null, current: number | null): void {
  expect(got.previous).toBe(previous);
  expect(got.current).toBe(current);
  // No change without both values, and no percentage of a zero.
  const delta = previous === null || current === null ? null : current - previous;
  const pct =
    delta === null || previous === null || previous === 0 ? null : (delta / previous) * 100;
  expect(got.delta).toEqual(delta === null ? null : expect.closeTo(delta, 6));
  expect(got.pct).toEqual(pct === null ? null : expect.closeTo(pct, 1));
}

function expectChanges(change: Record<string, unknown>, previous: Sums, current: Sums): void {
  for (const key of [...COUNTS, ...RATES]) {
    expectChange(
      change[key] as Change,
      previous[key] as number | null,
      current[key] as number | null,
    );
  }
  for (const money of ["revenue", "cost"] as const) {
    const byCurrency = change[money] as Record<string, Change>;
    const currencies = new Set([...Object.keys(previous[money]), ...Object.keys(current[money])]);
    expect(new Set(Object.keys(byCurrency))).toEqual(currencies);
    for (const c of currencies) {
      expectChange(byCurrency[c] as Change, previous[money][c] ?? 0, current[money][c] ?? 0);
    }
  }
}

const pick = (o: Record<string, unknown>) => Object.fromEntries(SUM_KEYS.map((k) => [k, o[k]]));

/** Each campaign shown carries `previous` exactly when the other call has it, with its sums. */
function expectPreviousPerCampaign(r: ToolResult, other: ToolResult): number {
  const there = new Map(
    (other.structured.campaigns as Array<Record<string, unknown>>).map((c) => [c._id, c]),
  );
  let both = 0;
  for (const c of r.structured.campaigns as Array<Record<string, unknown>>) {
    const match = there.get(c._id);
    expect(c.previous).toEqual(match === undefined ? undefined : pick(match));
    if (match !== undefined) both++;
  }
  return both;
}

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

describe("campaign_metrics compare_to previous_period", () => {
  it("gives comparison.totals equal to a separate call over the previous window, and change per metric", async () => {
    const before = h.sandbox.faults.requestCounts.campaign_metrics;
    const r = await h.call("campaign_metrics", {
      task_from: "2026-11-08",
      task_to: "2026-11-14",
      compare_to: "previous_period",
      top_n: 500,
    });
    expect(r.isError, r.text).toBeFalsy();
    // One request for each window.
    expect(h.sandbox.faults.requestCounts.campaign_metrics - before).toBe(2);
    const comparison = r.structured.comparison as Record<string, unknown>;
    // The seven days before November 8 to 14, as the service reads them.
    expect(comparison.task_from).toBe("2026-11-01T00:00:00+09:00");
    expect(comparison.task_to).toBe("2026-11-08T00:00:00+09:00");
    expect(comparison.compare_to).toBe("previous_period");
    expect(comparison.requests).toBe(1);

    const previous = await h.call("campaign_metrics", {
      task_from: "2026-11-01",
      task_to: "2026-11-07",
      top_n: 500,
    });
    expect(comparison.totals).toEqual(previous.structured.totals);
    expect(comparison.matched_campaigns).toBe(previous.structured.matched_campaigns);
    expect((previous.structured.totals as Sums).sent_count).toBeGreaterThan(0);
    expectChanges(
      comparison.change as Record<string, unknown>,
      previous.structured.totals as Sums,
      r.structured.totals as Sums,
    );
    // Campaigns in both windows, and campaigns in only this one, are both in the sandbox.
    const both = expectPreviousPerCampaign(r, previous);
    expect(both).toBeGreaterThan(0);
    expect(both).toBeLessThan((r.structured.campaigns as unknown[]).length);
  });

  it("leads the text with the biggest changes, signed, rates in percentage points", async () => {
    const args = {
      task_from: "2026-11-08",
      task_to: "2026-11-14",
      campaign_schedule_type: "api_trigger",
    };
    const r = await h.call("campaign_metrics", { ...args, compare_to: "previous_period" });
    const previous = await h.call("campaign_metrics", {
      ...args,
      task_from: "2026-11-01",
      task_to: "2026-11-07",
    });
    const cur = r.structured.totals as Record<string, number>;
    const prev = previous.structured.totals as Record<string, number>;
    const relative = (k: string) =>
      (((cur[k] as number) - (prev[k] as number)) / (prev[k] as number)) * 100;
    // Purchases moved the most of all figures, relatively, in these two weeks of the sandbox.
    const purchases = relative("purchase_count");
    for (const k of [...COUNTS, ...RATES].filter((k) => k !== "purchase_count")) {
      expect(Math.abs(relative(k)), k).toBeLessThan(Math.abs(purchases));
    }
    expect(purchases).toBeLessThan(-1);
    const lines = r.text.split("\n");
    expect(lines[1]).toMatch(
      new RegExp(
        `^Against the previous period \\(2026-11-01\\.\\.2026-11-07, KST\\): purchases ${cur.purchase_count} \\(▼ ${purchases.toFixed(1)}%\\); `,
      ),
    );
    // The conversion rate, as its change in percentage points.
    const pp =
      ((cur.computed_conversion_rate as number) - (prev.computed_conversion_rate as number)) * 100;
    expect(Math.abs(pp)).toBeGreaterThanOrEqual(0.1);
    const rate = `${((cur.computed_conversion_rate as number) * 100).toFixed(1)}%`;
    const signed = `${pp > 0 ? "▲ +" : "▼ "}${pp.toFixed(1)} pp`;
    expect(lines[1]).toContain(`conversion rate ${rate} (${signed})`);
    expect(lines[2]).toBe(
      `5 of the 5 campaigns shown also had rounds then (their sums there: campaigns[].previous).`,
    );
    // Small: the comparison costs a few lines of text.
    expect(lines[1]?.length ?? 0).toBeLessThan(600);
  });

  it("splits a previous window over 180 days into requests of its own, under one progress count", async () => {
    const before = h.sandbox.faults.requestCounts.campaign_metrics;
    const messages: string[] = [];
    const raw = await h.client.callTool(
      {
        name: "campaign_metrics",
        arguments: {
          task_from: "2026-05-01",
          task_to: "2026-11-21",
          compare_to: "previous_period",
        },
      },
      { onprogress: (p) => messages.push(String(p.message)) },
    );
    expect(raw.isError).toBeFalsy();
    const structured = raw.structuredContent as {
      window: { requests: number };
      comparison: { task_from: string; task_to: string; requests: number; totals: unknown };
    };
    // 205 days: two requests for the window, two for the 205 days before it.
    expect(structured.window.requests).toBe(2);
    expect(structured.comparison.requests).toBe(2);
    expect(h.sandbox.faults.requestCounts.campaign_metrics - before).toBe(4);
    expect(messages.filter((m) => m.startsWith("Campaign metrics: request"))).toEqual([
      expect.stringContaining("request 1 of 4"),
      expect.stringContaining("request 2 of 4"),
      expect.stringContaining("request 3 of 4"),
      expect.stringContaining("request 4 of 4"),
    ]);
    expect(structured.comparison.task_from).toBe("2025-10-08T00:00:00+09:00");
    expect(structured.comparison.task_to).toBe("2026-05-01T00:00:00+09:00");
    const previous = await h.call("campaign_metrics", {
      task_from: "2025-10-08",
      task_to: "2026-04-30",
    });
    expect(structured.comparison.totals).toEqual(previous.structured.totals);
  });

  it("adds the comparison to the report view and leaves the rest of the drawing as it is", async () => {
    const args = { task_from: "2026-11-08", task_to: "2026-11-14" };
    const plain = await h.call("campaign_metrics", args);
    const compared = await h.call("campaign_metrics", { ...args, compare_to: "previous_period" });
    expect(compared.structured.comparison).toBeDefined();
    // Both whole: a result cut to the budget says so on the page, which is not the point here.
    expect([plain.structured.truncated, compared.structured.truncated]).toEqual([
      undefined,
      undefined,
    ]);
    const withComparison = buildReport(compared.structured, "view");
    expect(withComparison.sections.map((section) => section.id)).toEqual([
      "comparison",
      ...buildReport(plain.structured, "view").sections.map((section) => section.id),
    ]);
    expect({
      ...withComparison,
      sections: withComparison.sections.filter((section) => section.id !== "comparison"),
    }).toEqual(buildReport(plain.structured, "view"));
  });

  it("refuses an unknown compare_to before any request, naming the values", async () => {
    const before = h.sandbox.faults.requestCounts.campaign_metrics;
    const r = await h.call("campaign_metrics", {
      task_from: "2026-11-01",
      compare_to: "last_week",
    });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('use one of "previous_period", "same_period_last_year"');
    expect(h.sandbox.faults.requestCounts.campaign_metrics).toBe(before);
  });
});

describe("campaign_metrics compare_to same_period_last_year", () => {
  it("says the previous window had no data when the service's data does not reach back a year", async () => {
    // The sandbox's rounds begin about 170 days before its clock: nothing a year back.
    const yearBack = Date.parse("2025-11-22T00:00:00+09:00");
    expect(
      h.sandbox.world.campaigns.every((c) => c.tasks.every((t) => t.scheduled_at >= yearBack)),
    ).toBe(true);
    const r = await h.call("campaign_metrics", {
      task_from: "2026-11-01",
      task_to: "2026-11-21",
      compare_to: "same_period_last_year",
    });
    expect(r.isError, r.text).toBeFalsy();
    const comparison = r.structured.comparison as {
      task_from: string;
      task_to: string;
      matched_campaigns: number;
      totals: Sums;
      change: Record<string, Change>;
    };
    expect(comparison.task_from).toBe("2025-11-01T00:00:00+09:00");
    expect(comparison.task_to).toBe("2025-11-22T00:00:00+09:00");
    expect(comparison.matched_campaigns).toBe(0);
    expect(comparison.totals.sent_count).toBe(0);
    const sent = (r.structured.totals as Sums).sent_count as number;
    expect(comparison.change.sent_count).toEqual({
      previous: 0,
      current: sent,
      delta: sent,
      pct: null,
    });
    expect(comparison.change.computed_open_rate?.pct).toBeNull();
    expect(r.text.split("\n")[1]).toBe(
      "Against the same period last year (2025-11-01..2025-11-21, KST): no data, no campaign had rounds then (the service's data may not reach back that far), so there is nothing to compare.",
    );
  });
});

describe("campaign_metrics compare_to with filters", () => {
  it("says no campaign matching the filters ran in the other window", async () => {
    // A one-off campaign: its only round is on November 2.
    const once = h.sandbox.world.campaigns.find((c) => c.name === "카드사 제휴 할인 안내 A/B");
    if (once === undefined) throw new Error("no one-off campaign in the sandbox world");
    expect(once.tasks).toHaveLength(1);
    const r = await h.call("campaign_metrics", {
      task_from: "2026-11-01",
      task_to: "2026-11-07",
      campaign_ids: [once._id],
      compare_to: "previous_period",
    });
    expect(r.structured.matched_campaigns).toBe(1);
    expect((r.structured.comparison as { matched_campaigns: number }).matched_campaigns).toBe(0);
    expect((r.structured.campaigns as Array<Record<string, unknown>>)[0]?.previous).toBeUndefined();
    expect(r.text.split("\n")[1]).toBe(
      "Against the previous period (2026-10-25..2026-10-31, KST): no data, no campaign matching these filters had rounds then, so there is nothing to compare.",
    );
  });
});

/**
 * The sandbox's world with a year of history: a request for a window also gets the rounds the
 * world has one year (365 days: no Feb 29 in between here) later, moved back a year, every
 * other one left out so that the years differ, and one campaign's revenue a year back in USD.
 */
const YEAR_MS = 365 * 86_400_000;
function withLastYear(real: World, usdCampaign: string): World {
  return {
    ...real,
    campaignMetrics(from, to, scheduleType) {
      const own = real.campaignMetrics(from, to, scheduleType);
      const later = real.campaignMetrics(from + YEAR_MS, to + YEAR_MS, scheduleType);
      const back = (iso: string) => new Date(Date.parse(iso) - YEAR_MS).toISOString();
      const echoes: MetricsResponse["campaigns"] = later.campaigns
        .map((c) => ({
          ...c,
          tasks: c.tasks
            .filter((_, i) => i % 2 === 0)
            .map((t) => ({
              ...t,
              _id: `${t._id}_ly`,
              scheduled_at: back(t.scheduled_at),
              sent_at: back(t.sent_at),
              ...(c._id === usdCampaign
                ? { revenue: Math.round(t.revenue / 13) / 100, revenue_currency: "USD" }
                : {}),
            })),
        }))
        .filter((c) => c.tasks.length > 0);
      const campaigns = own.campaigns.map((c) => ({ ...c, tasks: [...c.tasks] }));
      for (const echo of echoes) {
        const same = campaigns.find((c) => c._id === echo._id);
        if (same === undefined) campaigns.push(echo);
        else same.tasks.push(...echo.tasks);
      }
      return { campaigns };
    },
  };
}

describe("campaign_metrics compare_to same_period_last_year over a year of history", () => {
  let y: Harness;
  let usd: string;
  beforeAll(async () => {
    const real = createWorld({ seed: 42, now: Date.parse(SANDBOX_NOW) });
    const newsletter = real.campaigns.find((c) => c.name === "월간 뉴스레터");
    if (newsletter === undefined) throw new Error("no newsletter campaign in the sandbox world");
    usd = newsletter._id;
    const sandbox = await startSandbox({
      now: SANDBOX_NOW,
      jobSeconds: 0,
      world: withLastYear(real, usd),
    });
    y = await startHarness({ sandbox });
  });
  afterAll(async () => {
    await y?.close();
    await y?.sandbox.close();
  });

  it("gives comparison.totals equal to a separate call over the same dates a year back, money per currency", async () => {
    const r = await y.call("campaign_metrics", {
      task_from: "2026-10-01",
      task_to: "2026-11-21",
      compare_to: "same_period_last_year",
      top_n: 500,
    });
    expect(r.isError, r.text).toBeFalsy();
    const comparison = r.structured.comparison as Record<string, unknown>;
    expect(comparison.task_from).toBe("2025-10-01T00:00:00+09:00");
    expect(comparison.task_to).toBe("2025-11-22T00:00:00+09:00");
    const lastYear = await y.call("campaign_metrics", {
      task_from: "2025-10-01",
      task_to: "2025-11-21",
      top_n: 500,
    });
    const previous = lastYear.structured.totals as Sums;
    expect(comparison.totals).toEqual(previous);
    // The history is really there, and in two currencies.
    expect(previous.sent_count).toBeGreaterThan(0);
    expect(Object.keys(previous.revenue).sort()).toEqual(["KRW", "USD"]);
    expectChanges(
      comparison.change as Record<string, unknown>,
      previous,
      r.structured.totals as Sums,
    );
    // USD only a year back: all of it gone, never set against KRW.
    const usdChange = (comparison.change as { revenue: Record<string, Change> }).revenue.USD;
    expect(usdChange?.current).toBe(0);
    expect(usdChange?.pct).toBe(-100);
    const newsletter = (r.structured.campaigns as Array<Record<string, unknown>>).find(
      (c) => c._id === usd,
    );
    const newsletterBefore = newsletter?.previous as Sums | undefined;
    expect(Object.keys(newsletterBefore?.revenue ?? {})).toEqual(["USD"]);
    expect(expectPreviousPerCampaign(r, lastYear)).toBeGreaterThan(0);
    expect(r.text).toContain("revenue 0 USD (▼ -100.0%)");
  });
});
