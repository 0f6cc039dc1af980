import uPlot from "uplot";
import type { Chart, ValueFormat } from "../model.js";
import { formatValue } from "../value-text.js";

/**
 * Draws one model chart with uPlot on a canvas. Categories sit at x = 0..n-1; grouped bars are
 * placed side by side with uPlot's bar displacement (disp.x0/size). After each draw the
 * container's `data-marks` holds the number of marks drawn (bars, points, intervals), which the
 * browser tests compare with the data.
 */

const PALETTE = [
  "#4e79a7",
  "#f28e2b",
  "#59a14f",
  "#b07aa1",
  "#76b7b2",
  "#edc948",
  "#9c755f",
  "#ff9da7",
  "#bab0ac",
  "#e15759",
  "#86bcb6",
  "#d37295",
];
const SERIES_COLORS: Record<string, string> = { Failed: "#e15759", Failures: "#e15759" };
const GROUP_WIDTH = 0.8;
/** Axis steps for durations: whole seconds, minutes, hours and days. */
const SECOND_STEPS = [
  1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200, 86_400,
  172_800, 604_800,
];

export interface Theme {
  fg: string;
  muted: string;
  grid: string;
  font: string;
}

export function readTheme(element: Element): Theme {
  const style = getComputedStyle(element);
  const v = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
  return {
    fg: v("--fg", "#1b1f24"),
    muted: v("--fg-muted", "#5b6470"),
    grid: v("--grid", "#e6e9ee"),
    font: v("--font", "sans-serif"),
  };
}

function color(chart: Chart, index: number): string {
  const name = chart.series[index]?.name ?? "";
  return SERIES_COLORS[name] ?? PALETTE[index % PALETTE.length] ?? "#4e79a7";
}

/** Axis numbers, shorter than table text: 1.2k, 3.4M, 12%, 4 min. */
function axisValue(value: number, format: ValueFormat): string {
  if (format === "percent") return `${Math.round(value * 1000) / 10}%`;
  if (format === "seconds") return formatValue(value, "seconds");
  const abs = Math.abs(value);
  if (abs >= 1e6) return `${Math.round(value / 1e5) / 10}M`;
  if (abs >= 1e4) return `${Math.round(value / 100) / 10}k`;
  return formatValue(value, Number.isInteger(value) ? "count" : "number");
}

function measure(texts: string[], font: string): number {
  const ctx = document.createElement("canvas").getContext("2d");
  if (ctx === null) return 120;
  ctx.font = font;
  return texts.reduce((a, t) => Math.max(a, ctx.measureText(t).width), 0);
}

function shorten(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export interface DrawnChart {
  resize(width: number): void;
  destroy(): void;
}

export function drawChart(chart: Chart, target: HTMLElement, theme: Theme): DrawnChart {
  const n = chart.categories.length;
  const horizontal = chart.type === "hbar" || chart.type === "interval";
  const xs = chart.categories.map((_, i) => i);
  const font = `12px ${theme.font}`;
  const labels = chart.categories.map((c) => shorten(c, horizontal ? 30 : 22));
  const barSeries = chart.type === "bar" || chart.type === "hbar";
  const k = Math.max(1, chart.series.length);
  let marks = 0;

  const data: uPlot.AlignedData = [
    xs,
    ...(chart.type === "interval" ? chart.series.slice(0, 1) : chart.series).map((s) => s.values),
  ];
  const series: uPlot.Series[] = [
    { label: chart.categoryLabel, value: (_u, v) => (v === null ? "-" : (labels[v] ?? "")) },
  ];
  const drawnSeries = chart.type === "interval" ? chart.series.slice(0, 1) : chart.series;
  drawnSeries.forEach((s, i) => {
    const stroke = color(chart, i);
    if (barSeries) {
      series.push({
        label: s.name,
        stroke,
        fill: stroke,
        width: 0,
        points: { show: false },
        value: (_u, v) => formatValue(v, chart.format),
        paths: uPlot.paths.bars?.({
          align: 1,
          disp: {
            x0: {
              unit: 1,
              values: (u) =>
                (u.data[0] as number[]).map((x) => x - GROUP_WIDTH / 2 + (i * GROUP_WIDTH) / k),
            },
            size: { unit: 1, values: (u) => (u.data[0] as number[]).map(() => GROUP_WIDTH / k) },
          },
        }),
      });
    } else if (chart.type === "line") {
      series.push({
        label: s.name,
        stroke,
        width: 2,
        spanGaps: false,
        points: { show: true, size: 5, fill: stroke },
        value: (_u, v) => formatValue(v, chart.format),
      });
    } else {
      // interval: the estimate as a point; the whiskers are drawn in the draw hook below.
      series.push({
        label: s.name,
        stroke,
        width: 0,
        paths: () => null,
        points: { show: true, size: 9, fill: stroke },
        value: (_u, v) => formatValue(v, chart.format),
      });
    }
  });

  let range: [number, number] | undefined;
  if (chart.type === "interval") {
    const all = chart.series.flatMap((s) => s.values).filter((v): v is number => v !== null);
    const lo = Math.min(0, ...all);
    const hi = Math.max(0, ...all);
    const pad = (hi - lo) * 0.08 || 0.01;
    range = [lo - pad, hi + pad];
  }

  const categoryAxis: uPlot.Axis = {
    scale: "x",
    side: horizontal ? 3 : 2,
    stroke: theme.fg,
    font,
    grid: { show: false },
    ticks: { show: false },
    splits: () => xs,
    values: (_u, splits) => splits.map((v) => labels[v] ?? ""),
    ...(horizontal
      ? { size: Math.min(260, Math.ceil(measure(labels, font)) + 16) }
      : n > 8
        ? { rotate: -40, size: Math.min(150, Math.ceil(measure(labels, font) * 0.7) + 24) }
        : {}),
  };
  if (chart.type === "line") {
    // Dates: about eight labels whatever the number of days.
    const step = Math.max(1, Math.ceil(n / 8));
    categoryAxis.splits = () => xs.filter((i) => i % step === 0);
  }
  const valueAxis: uPlot.Axis = {
    scale: "y",
    side: horizontal ? 2 : 3,
    stroke: theme.muted,
    font,
    grid: { stroke: theme.grid, width: 1 },
    ticks: { stroke: theme.grid, width: 1 },
    values: (_u, splits) => splits.map((v) => axisValue(v, chart.format)),
    space: horizontal ? 64 : 30,
    ...(chart.format === "seconds" ? { incrs: SECOND_STEPS } : {}),
    size: horizontal ? 36 : Math.ceil(measure(["100.0k", "100%", "99.9 min"], font)) + 18,
  };

  const height = horizontal
    ? Math.max(140, n * Math.max(22, 10 * k) + 80)
    : chart.type === "line"
      ? 300
      : 280;

  const options: uPlot.Options = {
    width: Math.max(280, target.clientWidth),
    height,
    series,
    scales: {
      x: {
        time: false,
        ...(horizontal ? { ori: 1, dir: -1 } : {}),
        range: [-0.5, Math.max(0.5, n - 0.5)],
      },
      y: {
        ...(horizontal ? { ori: 0 } : {}),
        range: range
          ? () => range as [number, number]
          : (_u, min, max) => [Math.min(0, min ?? 0), max > 0 ? max * 1.08 : 1],
      },
    },
    axes: [categoryAxis, valueAxis],
    legend: { show: true, live: true },
    cursor: { drag: { x: false, y: false }, points: { show: false } },
    hooks: {
      drawClear: [
        () => {
          marks = 0;
        },
      ],
      drawSeries: [
        (u, sidx) => {
          const values = u.data[sidx] as Array<number | null> | undefined;
          const [i0, i1] = u.series[sidx]?.idxs ?? [0, -1];
          if (values === undefined) return;
          for (let i = i0; i <= i1; i++) if (values[i] !== null && values[i] !== undefined) marks++;
        },
      ],
      draw: [
        (u) => {
          if (chart.type === "interval") drawIntervals(u, chart, theme);
          target.dataset.marks = String(marks);
        },
      ],
    },
  };
  target.dataset.marks = "0";
  const plot = new uPlot(options, data, target);
  return {
    resize(width) {
      plot.setSize({ width: Math.max(280, width), height });
    },
    destroy() {
      plot.destroy();
    },
  };
}

/** Whiskers from low to high for each category, and the zero line they are judged against. */
function drawIntervals(u: uPlot, chart: Chart, theme: Theme): void {
  const [, low, high] = chart.series;
  if (!low || !high) return;
  const ctx = u.ctx;
  const ratio = devicePixelRatio || 1;
  ctx.save();
  const zero = u.valToPos(0, "y", true);
  ctx.strokeStyle = theme.muted;
  ctx.setLineDash([4 * ratio, 3 * ratio]);
  ctx.lineWidth = ratio;
  ctx.beginPath();
  ctx.moveTo(zero, u.bbox.top);
  ctx.lineTo(zero, u.bbox.top + u.bbox.height);
  ctx.stroke();
  ctx.setLineDash([]);
  ctx.lineWidth = 2 * ratio;
  ctx.strokeStyle = color(chart, 0);
  for (let i = 0; i < chart.categories.length; i++) {
    const lo = low.values[i];
    const hi = high.values[i];
    if (lo === null || hi === null || lo === undefined || hi === undefined) continue;
    const y = u.valToPos(i, "x", true);
    const x0 = u.valToPos(lo, "y", true);
    const x1 = u.valToPos(hi, "y", true);
    const cap = 6 * ratio;
    ctx.beginPath();
    ctx.moveTo(x0, y);
    ctx.lineTo(x1, y);
    ctx.moveTo(x0, y - cap);
    ctx.lineTo(x0, y + cap);
    ctx.moveTo(x1, y - cap);
    ctx.lineTo(x1, y + cap);
    ctx.stroke();
  }
  ctx.restore();
}
