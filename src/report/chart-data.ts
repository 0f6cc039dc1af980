import {
  type AnswerColumn,
  type ChartSpec,
  type ColumnKind,
  cellNumber,
  columnKinds,
  timePosition,
} from "./chart-choice.js";

/**
 * The values a chart of an answer draws (see chart-choice.ts for which chart): rows pivoted to one
 * series per numeric column or per value of the series column, within the limits of a readable
 * chart. A bar chart keeps its 30 largest categories, any chart its 10 largest series and at most
 * 2,000 points; what is left out is counted, for the page to say. Pure, no DOM.
 */

export const MAX_CATEGORIES = 30;
export const MAX_SERIES = 10;
export const MAX_POINTS = 2000;

export interface PlotSeries {
  /** The numeric column drawn, or the series column's value (null for NULL). */
  key: unknown;
  values: Array<number | null>;
}

export interface PlotData {
  /** The x of each category or point, as the answer holds it, in drawn order. */
  xs: unknown[];
  /** Line and scatter over time or numbers: where each x stands (seconds for time). */
  positions?: { kind: "time" | "number"; values: number[] };
  series: PlotSeries[];
  /** What the chart leaves out. */
  left: {
    /** Categories past the 30 largest (bar charts). */
    categories: number;
    /** Series past the 10 largest. */
    series: number;
    /** Values past the first 2,000 points. */
    points: number;
    /** Rows whose x (and series) was drawn already: the first is drawn. */
    repeats: number;
    /** Rows without an x to place them by. */
    unplaced: number;
  };
}

type Row = readonly unknown[];

const key = (value: unknown) => JSON.stringify(value ?? null);

/** The drawn values of `spec` (a line, bar or scatter chart) over the answer's rows. */
export function plotData(
  spec: ChartSpec,
  columns: readonly AnswerColumn[],
  rows: readonly Row[],
): PlotData {
  const at = (name: string | null) => columns.findIndex((c) => c.name === name);
  const kinds = columnKinds(columns, rows);
  const xi = at(spec.x);
  const si = spec.series === null ? -1 : at(spec.series);
  const yi = spec.y.map(at);
  const xKind = kinds[xi] ?? "category";
  const left = { categories: 0, series: 0, points: 0, repeats: 0, unplaced: 0 };
  const continuous = spec.type !== "bar" && xKind !== "category";
  const place = (x: unknown) => (xKind === "time" ? timePosition(x) : (cellNumber(x) ?? undefined));
  let placed = rows;
  if (continuous) {
    placed = rows.filter((r) => place(r[xi]) !== undefined);
    left.unplaced = rows.length - placed.length;
  }
  const data =
    spec.type === "scatter"
      ? scatter(placed, columns, xi, yi, si, place)
      : pivot(placed, columns, xi, yi, si, left, continuous ? place : undefined);
  keepLargestSeries(data, left);
  if (spec.type === "bar") keepLargestCategories(data, left);
  capPoints(data, left);
  const positions = continuous ? positionsOf(data.xs, xKind, place) : undefined;
  return { ...data, ...(positions === undefined ? {} : { positions }), left };
}

function positionsOf(
  xs: unknown[],
  kind: ColumnKind,
  place: (x: unknown) => number | undefined,
): PlotData["positions"] {
  return { kind: kind === "time" ? "time" : "number", values: xs.map((x) => place(x) ?? 0) };
}

/** One category per distinct x, one series per y column or per series value. */
function pivot(
  rows: readonly Row[],
  columns: readonly AnswerColumn[],
  xi: number,
  yi: number[],
  si: number,
  left: PlotData["left"],
  place: ((x: unknown) => number | undefined) | undefined,
): Pick<PlotData, "xs" | "series"> {
  const xs = new Map<string, unknown>();
  /** Each series' values by x, and what names it (a y column, or a series value). */
  const series = new Map<string, { key: unknown; byX: Map<string, number | null> }>();
  for (const row of rows) {
    const xk = key(row[xi]);
    const cells: Array<[string, unknown, number | null]> =
      si < 0
        ? yi.map((i) => [`y${i}`, columns[i]?.name, cellNumber(row[i])])
        : [[key(row[si]), row[si] ?? null, cellNumber(row[yi[0] ?? -1])]];
    if (series.get(cells[0]?.[0] ?? "")?.byX.has(xk)) {
      left.repeats++;
      continue;
    }
    if (!xs.has(xk)) xs.set(xk, row[xi] ?? null);
    for (const [sk, name, value] of cells) {
      let s = series.get(sk);
      if (s === undefined) {
        s = { key: name, byX: new Map() };
        series.set(sk, s);
      }
      s.byX.set(xk, value);
    }
  }
  let order = [...xs.keys()];
  // Along a time or number axis the x values go in order; categories keep the answer's order.
  if (place !== undefined) {
    const at = new Map(order.map((xk) => [xk, place(xs.get(xk)) ?? 0]));
    order = order.sort((a, b) => (at.get(a) ?? 0) - (at.get(b) ?? 0));
  }
  return {
    xs: order.map((xk) => xs.get(xk)),
    series: [...series.values()].map((s) => ({
      key: s.key,
      values: order.map((xk) => s.byX.get(xk) ?? null),
    })),
  };
}

/** One point per row, in x order; one series per y column or per series value. */
function scatter(
  rows: readonly Row[],
  columns: readonly AnswerColumn[],
  xi: number,
  yi: number[],
  si: number,
  place: (x: unknown) => number | undefined,
): Pick<PlotData, "xs" | "series"> {
  const sorted = rows
    .map((row) => ({ row, at: place(row[xi]) ?? 0 }))
    .sort((a, b) => a.at - b.at)
    .map((p) => p.row);
  if (si < 0) {
    return {
      xs: sorted.map((r) => r[xi]),
      series: yi.map((i) => ({
        key: columns[i]?.name,
        values: sorted.map((r) => cellNumber(r[i])),
      })),
    };
  }
  const keys = new Map<string, unknown>();
  for (const r of sorted) if (!keys.has(key(r[si]))) keys.set(key(r[si]), r[si] ?? null);
  const y = yi[0] ?? -1;
  return {
    xs: sorted.map((r) => r[xi]),
    series: [...keys].map(([k, v]) => ({
      key: v,
      values: sorted.map((r) => (key(r[si]) === k ? cellNumber(r[y]) : null)),
    })),
  };
}

const total = (values: readonly (number | null)[]) =>
  values.reduce<number>((a, v) => a + Math.abs(v ?? 0), 0);

/** The `limit` indexes of the largest `sizes`, in their first order. */
function largest(sizes: number[], limit: number): Set<number> {
  const ranked = sizes.map((s, i) => [s, i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  return new Set(ranked.slice(0, limit).map(([, i]) => i));
}

function keepLargestSeries(data: Pick<PlotData, "xs" | "series">, left: PlotData["left"]): void {
  if (data.series.length <= MAX_SERIES) return;
  const kept = largest(
    data.series.map((s) => total(s.values)),
    MAX_SERIES,
  );
  left.series = data.series.length - kept.size;
  data.series = data.series.filter((_, i) => kept.has(i));
  // A point of a scatter plot whose series is gone has nothing left to draw.
  const drawn = data.xs.map((_, i) => data.series.some((s) => s.values[i] !== null));
  if (drawn.every(Boolean)) return;
  data.xs = data.xs.filter((_, i) => drawn[i]);
  for (const s of data.series) s.values = s.values.filter((_, i) => drawn[i]);
}

function keepLargestCategories(
  data: Pick<PlotData, "xs" | "series">,
  left: PlotData["left"],
): void {
  if (data.xs.length <= MAX_CATEGORIES) return;
  const sizes = data.xs.map((_, i) => total(data.series.map((s) => s.values[i] ?? null)));
  const kept = largest(sizes, MAX_CATEGORIES);
  left.categories = data.xs.length - kept.size;
  data.xs = data.xs.filter((_, i) => kept.has(i));
  for (const s of data.series) s.values = s.values.filter((_, i) => kept.has(i));
}

/** The first x values whose points stay within MAX_POINTS; the rest are counted. */
function capPoints(data: Pick<PlotData, "xs" | "series">, left: PlotData["left"]): void {
  let points = 0;
  let end = 0;
  for (; end < data.xs.length; end++) {
    const here = data.series.filter((s) => s.values[end] !== null).length;
    if (points + here > MAX_POINTS) break;
    points += here;
  }
  if (end === data.xs.length) return;
  for (const s of data.series) {
    left.points += s.values.slice(end).filter((v) => v !== null).length;
    s.values = s.values.slice(0, end);
  }
  data.xs = data.xs.slice(0, end);
}
