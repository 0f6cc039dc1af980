/**
 * The axis of a box chart's row (box-chart.ts), apart from the DOM so it can be checked alone.
 */

/**
 * Axis steps, as ratios: 0.1 pp to 25 pp. Every multiple of each has at most one decimal in
 * percent, as the view's axis labels write it (f.axis): a 0.25 pp step would put "92.3%" where
 * 92.25% is.
 */
const STEPS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.025, 0.05, 0.1, 0.2, 0.25];
const MAX_STEPS = 4;

/**
 * From `lo` to `hi` (ratios within 0..1) in round steps, holding every value given; a value on a
 * step is an end of its own (the ratios' float noise, 0.97 - 0.93 = 0.04000000000000004, aside).
 */
export function rowScale(values: number[]): { lo: number; hi: number; ticks: number[] } {
  const EPSILON = 1e-9;
  const min = Math.min(...values);
  const max = Math.max(...values);
  const span = Math.max(max - min, 0.002);
  const step = STEPS.find((s) => span / s <= MAX_STEPS + EPSILON) ?? 0.25;
  const lo = round(Math.max(0, Math.floor(min / step + EPSILON) * step));
  let hi = round(Math.min(1, Math.ceil(max / step - EPSILON) * step));
  if (hi <= lo) hi = round(Math.min(1, lo + step));
  const count = Math.round((hi - lo) / step);
  const ticks = Array.from({ length: count + 1 }, (_, i) => round(lo + i * step));
  return { lo, hi, ticks };
}

/** Six decimals: a ratio's float noise off, every step of the axis kept. */
function round(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
