import type { DuckDBConnection } from "@duckdb/node-api";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { baselineMetric, quantileLinear } from "../../src/history/baseline.js";
import { loadDuckDb } from "../../src/query/engine.js";

/**
 * The baseline's quantiles against a direct computation: DuckDB's quantile_cont (linear
 * interpolation between the nearest ranks) over the same numbers, in any order; and its flags
 * against Tukey's fences computed here from those quartiles.
 */

let connection: DuckDBConnection;
let close: () => void;
beforeAll(async () => {
  const duck = await loadDuckDb();
  const db = await duck.DuckDBInstance.create(":memory:");
  connection = await db.connect();
  close = () => {
    connection.closeSync();
    db.closeSync();
  };
});
afterAll(() => close?.());

/** quantile_cont of the numbers, each passed as its exact decimal text cast to DOUBLE. */
async function duckQuantile(values: readonly number[], q: number): Promise<number> {
  const rows = values.map((v) => `(CAST('${v}' AS DOUBLE))`).join(", ");
  const reader = await connection.runAndReadAll(
    `SELECT quantile_cont(x, CAST('${q}' AS DOUBLE)) FROM (VALUES ${rows}) t(x)`,
  );
  return Number(reader.getRows()[0]?.[0]);
}

const ascending = (values: readonly number[]) => [...values].sort((a, b) => a - b);

// Rates as the baseline sees them (0 to 1, six decimals), often tied, as real campaigns are.
const rate = fc.oneof(
  fc.integer({ min: 0, max: 1_000_000 }).map((n) => n / 1_000_000),
  fc.constantFrom(0, 0.5, 1),
);
const rates = fc.array(rate, { minLength: 1, maxLength: 25 });

describe("quantileLinear", () => {
  it("equals DuckDB's quantile_cont over the same numbers, at every q", async () => {
    await fc.assert(
      fc.asyncProperty(
        rates,
        fc.oneof(
          fc.constantFrom(0, 0.25, 0.5, 0.75, 1),
          fc.double({ min: 0, max: 1, noNaN: true }),
        ),
        async (values, q) => {
          const ours = quantileLinear(ascending(values), q);
          expect(ours).toBeCloseTo(await duckQuantile(values, q), 12);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("lies between the smallest and largest, and never falls as q grows", () => {
    fc.assert(
      fc.property(rates, fc.double({ min: 0, max: 1, noNaN: true }), (values, q) => {
        const sorted = ascending(values);
        const at = quantileLinear(sorted, q);
        expect(at).toBeGreaterThanOrEqual(sorted[0] as number);
        expect(at).toBeLessThanOrEqual(sorted.at(-1) as number);
        expect(quantileLinear(sorted, Math.min(1, q + 0.1))).toBeGreaterThanOrEqual(at);
      }),
    );
  });

  it("is the middle value of an odd count and the mean of the two middle ones of an even", () => {
    expect(quantileLinear([0.1, 0.2, 0.9], 0.5)).toBe(0.2);
    expect(quantileLinear([0.1, 0.2, 0.4, 0.9], 0.5)).toBeCloseTo(0.3, 15);
    expect(quantileLinear([0.1, 0.2, 0.9], 0.25)).toBeCloseTo(0.15, 15);
    expect(quantileLinear([0.1, 0.2, 0.9], 0.75)).toBeCloseTo(0.55, 15);
  });
});

describe("baselineMetric", () => {
  it("gives DuckDB's quartiles and median, flagging a value beyond 1.5 IQR", async () => {
    await fc.assert(
      fc.asyncProperty(rates, rate, async (others, value) => {
        const m = baselineMetric(value, others);
        const [p25, median, p75] = await Promise.all(
          [0.25, 0.5, 0.75].map((q) => duckQuantile(others, q)),
        );
        expect(m.value).toBe(value);
        // Rounded to six decimals: at most half a millionth off.
        const off = (ours: number, duck: number | undefined) => Math.abs(ours - (duck as number));
        expect(off(m.p25, p25)).toBeLessThanOrEqual(5.000001e-7);
        expect(off(m.median, median)).toBeLessThanOrEqual(5.000001e-7);
        expect(off(m.p75, p75)).toBeLessThanOrEqual(5.000001e-7);
        const iqr = m.p75 - m.p25;
        const high = m.p75 + 1.5 * iqr;
        const low = m.p25 - 1.5 * iqr;
        // On a fence, six-decimal rounding decides: only values clear of both are judged.
        fc.pre(Math.abs(value - high) > 1e-6 && Math.abs(value - low) > 1e-6);
        expect(m.flag).toBe(value > high ? "above" : value < low ? "below" : null);
      }),
      { numRuns: 200 },
    );
  });

  it("flags by the fences: three campaigns at 10%, 12% and 14% open", () => {
    const others = [0.1, 0.12, 0.14];
    // p25 0.11, p75 0.13, IQR 0.02: fences at 0.08 and 0.16.
    expect(baselineMetric(0.161, others)).toEqual({
      value: 0.161,
      median: 0.12,
      p25: 0.11,
      p75: 0.13,
      flag: "above",
    });
    expect(baselineMetric(0.079, others).flag).toBe("below");
    expect(baselineMetric(0.16, others).flag).toBeNull();
    expect(baselineMetric(0.08, others).flag).toBeNull();
  });
});
