import uPlot from "uplot";
import type { Chart } from "../model.js";
import {
  type ChartColors,
  type DrawnChart,
  MIN_WIDTH,
  markCounter,
  measure,
  seriesColor,
} from "./chart-kit.js";
import { shortLabels } from "./labels.js";
import type { Formats } from "./locale-format.js";
import { drawXYChart } from "./xy-chart.js";

export type { ChartColors, DrawnChart } from "./chart-kit.js";

/**
 * Draws one model chart with uPlot on a canvas. Categories sit at x = 0..n-1; grouped bars are
 * placed side by side with uPlot's bar displacement (disp.x0/size), stacked bars each from the
 * top of the one below (disp.y0/y1). A line or scatter plot along a continuous x is drawn by
 * xy-chart.ts. After each draw the container's `data-marks` holds the number of marks drawn
 * (bars, points, intervals), which the browser tests compare with the data, and `data-labels`
 * the category labels as drawn.
 */

const GROUP_WIDTH = 0.8;
/** Axis steps for durations: whole seconds, minutes, hours and days. */
const SECOND_STEPS = [
  1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200, 86_400,
  172_800, 604_800,
];

/** The longest labels (in characters, at most `maxChars`) whose widest fits in `px`. */
function fitLabels(labels: readonly string[], font: string, px: number, maxChars: number) {
  let fitted = shortLabels(labels, maxChars);
  for (let chars = maxChars - 1; chars >= 8 && measure(fitted, font) > px; chars--) {
    fitted = shortLabels(labels, chars);
  }
  return fitted;
}

interface Layout {
  key: string;
  labels: string[];
  categoryAxis: Partial<uPlot.Axis>;
}

/** How the category labels are written at `width`: cut, rotated, and how much room they take. */
function categoryLayout(chart: Chart, formats: Formats, font: string, width: number): Layout {
  const n = chart.categories.length;
  const display = chart.categories.map((c) => formats.categoryShort(c));
  if (chart.type === "hbar" || chart.type === "interval") {
    const room = Math.min(260, Math.round(width * 0.4));
    const labels = fitLabels(display, font, room - 16, 30);
    const size = Math.ceil(Math.min(room, measure(labels, font) + 16));
    return { key: `h${size}:${labels.join("\u0000")}`, labels, categoryAxis: { size } };
  }
  const labels = shortLabels(display, 22);
  const shown = chart.type === "line" ? Math.ceil(n / Math.max(1, Math.ceil(n / 8))) : n;
  // The plot is the width less the value axis (about 60 px) and uPlot's padding.
  const slot = (width - 80) / Math.max(1, shown);
  const widest = measure(labels, font);
  if (widest <= slot - 8) return { key: "flat", labels, categoryAxis: {} };
  const size = Math.min(150, Math.ceil(widest * 0.7) + 24);
  return { key: `rotated${size}`, labels, categoryAxis: { rotate: -40, size } };
}

export function drawChart(
  chart: Chart,
  target: HTMLElement,
  colors: ChartColors,
  formats: Formats,
  initialWidth: number,
): DrawnChart {
  if (chart.type === "scatter" || chart.positions !== undefined) {
    return drawXYChart(chart, target, colors, formats, Math.max(MIN_WIDTH, initialWidth));
  }
  const n = chart.categories.length;
  const horizontal = chart.type === "hbar" || chart.type === "interval";
  const xs = chart.categories.map((_, i) => i);
  const font = `12px ${colors.font}`;
  const barSeries = chart.type === "bar" || chart.type === "hbar" || chart.type === "stacked";
  const drawnSeries = chart.type === "interval" ? chart.series.slice(0, 1) : chart.series;
  const stacked = chart.type === "stacked";
  // Side by side, each bar takes a share of its category's width; stacked, all of it.
  const k = stacked ? 1 : Math.max(1, drawnSeries.length);
  const tops = stacked ? stackTops(chart) : [];

  const data: uPlot.AlignedData = [xs, ...drawnSeries.map((s) => s.values)];
  // The legend doubles as the tooltip: the hovered category in full and each value, or nothing
  // while no category is hovered (uPlot's own placeholder would be "--").
  const legendValue = (_u: uPlot, v: number | null) =>
    v === null ? "" : formats.value(v, chart.format, "");
  const series: uPlot.Series[] = [
    {
      label: chart.categoryLabel,
      value: (_u, v) => (v === null ? "" : formats.categoryFull(chart.categories[v] ?? "")),
    },
  ];
  drawnSeries.forEach((s, i) => {
    const stroke = seriesColor(chart, colors, i);
    if (barSeries) {
      series.push({
        label: s.name,
        stroke,
        fill: stroke,
        width: 0,
        points: { show: false },
        value: legendValue,
        paths: uPlot.paths.bars?.({
          align: 1,
          disp: {
            x0: {
              unit: 1,
              values: (u) =>
                (u.data[0] as number[]).map(
                  (x) => x - GROUP_WIDTH / 2 + ((stacked ? 0 : i) * GROUP_WIDTH) / k,
                ),
            },
            size: { unit: 1, values: (u) => (u.data[0] as number[]).map(() => GROUP_WIDTH / k) },
            ...(stacked
              ? {
                  y0: { unit: 1, values: () => tops[i] ?? [] },
                  y1: { unit: 1, values: () => tops[i + 1] ?? [] },
                }
              : {}),
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
        value: legendValue,
      });
    } else {
      // interval: the estimate as a point; the whiskers are drawn in the draw hook below.
      series.push({
        label: s.name,
        stroke,
        width: 0,
        paths: () => null,
        points: { show: true, size: 9, fill: stroke },
        value: (_u, v) => (v === null ? "" : formats.signed(v, chart.format)),
      });
    }
  });

  let range: [number, number] | undefined;
  if (stacked) {
    const highest = Math.max(0, ...(tops.at(-1) ?? []).map((v) => v ?? 0));
    range = [0, highest > 0 ? highest * 1.08 : 1];
  } else if (chart.type === "interval") {
    const all = chart.series.flatMap((s) => s.values).filter((v): v is number => v !== null);
    const lo = Math.min(0, ...all);
    const hi = Math.max(0, ...all);
    const pad = (hi - lo) * 0.08 || 0.01;
    range = [lo - pad, hi + pad];
  }

  const valueAxis: uPlot.Axis = {
    scale: "y",
    side: horizontal ? 2 : 3,
    stroke: colors.muted,
    font,
    grid: { stroke: colors.grid, width: 1 },
    // No ticks outside the plot: the axes' margins hold text only.
    ticks: { show: false },
    values: (_u, splits) => splits.map((v) => formats.axis(v, chart.format)),
    space: horizontal ? 64 : 30,
    ...(chart.format === "seconds" ? { incrs: SECOND_STEPS } : {}),
    size: (_u, values) => (horizontal ? 36 : Math.ceil(measure(values ?? ["100%"], font)) + 18),
  };

  const height = horizontal
    ? Math.max(140, n * Math.max(22, 10 * k) + 80)
    : chart.type === "line"
      ? 300
      : 280;

  const build = (width: number, layout: Layout): uPlot => {
    const categoryAxis: uPlot.Axis = {
      scale: "x",
      side: horizontal ? 3 : 2,
      stroke: colors.text,
      font,
      grid: { show: false },
      ticks: { show: false },
      splits: () =>
        chart.type === "line" ? xs.filter((i) => i % Math.max(1, Math.ceil(n / 8)) === 0) : xs,
      values: (_u, splits) => splits.map((v) => layout.labels[v] ?? ""),
      ...layout.categoryAxis,
    };
    const options: uPlot.Options = {
      width,
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
      hooks: markCounter(target, (u) => {
        if (chart.type === "interval") drawIntervals(u, chart, colors);
      }),
    };
    // The category labels as drawn on the canvas, for tests and for reading the page's source.
    target.dataset.labels = JSON.stringify(layout.labels);
    return new uPlot(options, data, target);
  };

  let width = Math.max(MIN_WIDTH, initialWidth);
  let layout = categoryLayout(chart, formats, font, width);
  let plot = build(width, layout);
  return {
    resize(next) {
      const nextWidth = Math.max(MIN_WIDTH, next);
      if (nextWidth === width) return;
      width = nextWidth;
      const nextLayout = categoryLayout(chart, formats, font, width);
      if (nextLayout.key === layout.key) {
        plot.setSize({ width, height });
        return;
      }
      layout = nextLayout;
      plot.destroy();
      plot = build(width, layout);
    },
    destroy() {
      plot.destroy();
    },
  };
}

/**
 * Where each stacked bar starts and ends: tops[0] the baseline, tops[i + 1] the top of series i
 * (a value left out adds nothing). Only values at or above zero are stacked (chart-choice.ts).
 */
function stackTops(chart: Chart): Array<Array<number | null>> {
  const tops: Array<Array<number | null>> = [chart.categories.map(() => 0)];
  for (const s of chart.series) {
    const below = tops.at(-1) ?? [];
    tops.push(below.map((b, i) => (b ?? 0) + (s.values[i] ?? 0)));
  }
  return tops;
}

/** Whiskers from low to high for each category, and the zero line they are judged against. */
function drawIntervals(u: uPlot, chart: Chart, colors: ChartColors): void {
  const [, low, high] = chart.series;
  if (!low || !high) return;
  const ctx = u.ctx;
  const ratio = devicePixelRatio || 1;
  ctx.save();
  const zero = u.valToPos(0, "y", true);
  ctx.strokeStyle = colors.muted;
  ctx.setLineDash([4 * ratio, 3 * ratio]);
  ctx.lineWidth = ratio;
  ctx.beginPath();
  ctx.moveTo(zero, u.bbox.top);
  ctx.lineTo(zero, u.bbox.top + u.bbox.height);
  ctx.stroke();
  ctx.setLineDash([]);
  ctx.lineWidth = 2 * ratio;
  ctx.strokeStyle = seriesColor(chart, colors, 0);
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
