import { safeText } from "./safe-text.js";

/** Small, dependency-free statistics and text helpers shared by the summaries. */

/** a / b, or 0 when b is 0 (the spec's rule for ratio columns, used for every rate we show). */
export function ratio(a: number, b: number): number {
  return b === 0 ? 0 : a / b;
}

/** Rounds to 6 decimal places so JSON stays readable without changing any verdict. */
export function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}

/** Standard normal CDF through erfc (W. J. Cody's rational approximation via Numerical Recipes). */
export function normalCdf(z: number): number {
  return 0.5 * erfc(-z / Math.SQRT2);
}

function erfc(x: number): number {
  // Numerical Recipes erfcc: fractional error below 1.2e-7 everywhere.
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t *
                      (-0.18628806 +
                        t *
                          (0.27886807 +
                            t *
                              (-1.13520398 +
                                t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? r : 2 - r;
}

export interface ProportionTest {
  z: number;
  p_value: number;
  significant: boolean;
}

/**
 * Two-sided pooled two-proportion z-test of x1/n1 against x2/n2. Undefined (null) when either
 * side has no trials or the pooled rate is 0 or 1, where the test says nothing.
 */
export function twoProportionTest(
  x1: number,
  n1: number,
  x2: number,
  n2: number,
): ProportionTest | null {
  if (n1 <= 0 || n2 <= 0) return null;
  const pooled = (x1 + x2) / (n1 + n2);
  const se = Math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2));
  if (!(se > 0)) return null;
  const z = (x1 / n1 - x2 / n2) / se;
  const p = Math.min(1, 2 * (1 - normalCdf(Math.abs(z))));
  return { z: round6(z), p_value: Number(p.toPrecision(4)), significant: p < 0.05 };
}

/**
 * A p-value for text, at the precision a reader decides on: below 0.001 as a bound (never
 * "p = 0"), else 3 decimals. The exact value stays in the structured result.
 */
export function formatP(p: number): string {
  return p < 0.001 ? "p < 0.001" : `p = ${p.toFixed(3)}`;
}

/** Nearest-rank quantile of an ascending-sorted array; null when empty. */
export function quantileSorted(sorted: ArrayLike<number>, q: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[rank - 1] ?? null;
}

/** Third-party text made safe to show as quoted data (see safe-text.ts). */
export function sanitizeSample(text: string, maxChars = 160): string {
  return safeText(text, maxChars);
}
