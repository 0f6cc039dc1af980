import { describe, expect, it } from "vitest";
import { formatP, normalCdf, quantileSorted, twoProportionTest } from "../../src/analysis/stats.js";

describe("normalCdf", () => {
  it("matches tabulated values of the standard normal distribution", () => {
    // Values from a standard normal table (Φ(z) to 7 decimals).
    const table: [number, number][] = [
      [0, 0.5],
      [1, 0.8413447],
      [1.959964, 0.975],
      [-1.959964, 0.025],
      [2.575829, 0.995],
      [3, 0.9986501],
      [-4, 0.0000317],
    ];
    for (const [z, phi] of table) expect(normalCdf(z)).toBeCloseTo(phi, 6);
  });
});

describe("twoProportionTest", () => {
  it("is null where the test says nothing", () => {
    expect(twoProportionTest(1, 0, 1, 10)).toBeNull();
    expect(twoProportionTest(1, 10, 1, 0)).toBeNull();
    expect(twoProportionTest(0, 10, 0, 20)).toBeNull(); // pooled rate 0
    expect(twoProportionTest(10, 10, 20, 20)).toBeNull(); // pooled rate 1
  });

  it("gives the textbook z and p for a worked example", () => {
    // 45/100 vs 30/100: pooled 0.375, se = sqrt(0.375*0.625*0.02) = 0.0684653, z = 2.1909.
    const t = twoProportionTest(45, 100, 30, 100);
    expect(t?.z).toBeCloseTo(2.19089, 4);
    expect(t?.p_value).toBeCloseTo(0.02846, 4);
    expect(t?.significant).toBe(true);
    const same = twoProportionTest(30, 100, 30, 100);
    expect(same?.z).toBe(0);
    expect(same?.p_value).toBe(1);
    expect(same?.significant).toBe(false);
  });

  it("keeps a tiny p as a small positive number, shown as a bound", () => {
    const t = twoProportionTest(9000, 10000, 1000, 10000);
    expect(t?.significant).toBe(true);
    expect(t?.p_value).toBeGreaterThanOrEqual(0);
    expect(t?.p_value).toBeLessThan(1e-12);
    expect(formatP(t?.p_value ?? 1)).toBe("p < 0.001");
    expect(formatP(0.0312)).toBe("p = 0.031");
    expect(formatP(0.000999)).toBe("p < 0.001");
    expect(formatP(0.001)).toBe("p = 0.001");
  });
});

describe("quantileSorted", () => {
  it("uses the nearest rank and is null when empty", () => {
    expect(quantileSorted([], 0.5)).toBeNull();
    expect(quantileSorted([1, 2, 3, 4], 0.5)).toBe(2);
    expect(quantileSorted([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.9)).toBe(9);
    expect(quantileSorted([7], 0.9)).toBe(7);
  });
});
