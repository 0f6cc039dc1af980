import { describe, expect, it } from "vitest";
import { changeOf, changesBetween } from "../../../src/tools/campaign-metrics/change.js";
import type { Sums } from "../../../src/tools/campaign-metrics/schemas.js";

function sums(overrides: Partial<Sums>): Sums {
  return {
    task_count: 1,
    sent_count: 0,
    received_count: 0,
    open_count: 0,
    click_count: 0,
    purchase_count: 0,
    purchase_count_by_open: 0,
    revenue: {},
    cost: {},
    rounds_aggregating: 0,
    computed_open_rate: null,
    computed_click_rate: null,
    computed_conversion_rate: null,
    ...overrides,
  };
}

describe("change between two windows", () => {
  it("gives delta and pct in percent per count, pct null when previous is 0", () => {
    const change = changesBetween(
      sums({ sent_count: 800, open_count: 0, click_count: 40 }),
      sums({ sent_count: 1000, open_count: 25, click_count: 30 }),
    );
    expect(change.sent_count).toEqual({ previous: 800, current: 1000, delta: 200, pct: 25 });
    expect(change.open_count).toEqual({ previous: 0, current: 25, delta: 25, pct: null });
    expect(change.click_count).toEqual({ previous: 40, current: 30, delta: -10, pct: -25 });
    expect(change.received_count).toEqual({ previous: 0, current: 0, delta: 0, pct: null });
  });

  it("compares rates as ratios: delta 0.018 is +1.8 percentage points", () => {
    const change = changesBetween(
      sums({ computed_open_rate: 0.106 }),
      sums({ computed_open_rate: 0.124, computed_click_rate: 0.02 }),
    );
    expect(change.computed_open_rate).toEqual({
      previous: 0.106,
      current: 0.124,
      delta: 0.018,
      pct: 16.98,
    });
    // No rate before (nothing received then): nothing to subtract.
    expect(change.computed_click_rate).toEqual({
      previous: null,
      current: 0.02,
      delta: null,
      pct: null,
    });
  });

  it("compares money per currency, never across, a missing currency as 0", () => {
    const change = changesBetween(
      sums({ revenue: { KRW: 1_000_000, USD: 10.1 }, cost: { KRW: 5000 } }),
      sums({ revenue: { KRW: 1_200_000, JPY: 300 }, cost: { KRW: 5000 } }),
    );
    expect(change.revenue).toEqual({
      KRW: { previous: 1_000_000, current: 1_200_000, delta: 200_000, pct: 20 },
      JPY: { previous: 0, current: 300, delta: 300, pct: null },
      USD: { previous: 10.1, current: 0, delta: -10.1, pct: -100 },
    });
    expect(change.cost).toEqual({ KRW: { previous: 5000, current: 5000, delta: 0, pct: 0 } });
  });

  it("keeps float noise out of money deltas", () => {
    expect(changeOf(0.1 + 0.2, 0.6, (v) => Math.round(v * 1e6) / 1e6).delta).toBe(0.3);
    expect(
      changesBetween(sums({ revenue: { USD: 0.1 } }), sums({ revenue: { USD: 0.3 } })).revenue.USD
        ?.delta,
    ).toBe(0.2);
  });
});
