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
import type { Formats } from "./locale-format.js";

/**
 * A line or scatter plot along a continuous x (a query answer's times or numbers): each category
 * stands at its position, so uneven gaps between days show as gaps. Time ticks fall on whole
 * hours, days and months of the wall time the answer holds (read as UTC, written by Intl in the
 * page's locale). Lines break where a value is missing; points are shown while there are few.
 * `data-marks` counts the values drawn, as for every chart; `data-axis` says what x is.
 */

/** Above this many x values a line shows no point markers (they would hide the line). */
const MAX_MARKED_POINTS = 120;
const HEIGHT = 300;
const DAY = 86_400;

/** A range 5% wider than [min, max] on each side (one unit for a single value). */
function padded(min: number, max: number): uPlot.Range.MinMax {
  const pad = max > min ? (max - min) * 0.05 : Math.max(1, Math.abs(max) * 0.05);
  return [min - pad, max + pad];
}

/** A tick of a time axis at `seconds`, written for the step between ticks. */
function timeTick(seconds: number, step: number, formats: Formats): string {
  const iso = new Date(seconds * 1000).toISOString();
  if (step >= DAY) return formats.categoryShort(iso.slice(0, 10));
  return formats.localTime(iso.slice(0, 16).replace("T", " "), true);
}

export function drawXYChart(
  chart: Chart,
  target: HTMLElement,
  colors: ChartColors,
  formats: Formats,
  initialWidth: number,
): DrawnChart {
  const positions = chart.positions ?? {
    kind: "number" as const,
    values: chart.categories.map((_, i) => i),
  };
  const time = positions.kind === "time";
  const scatter = chart.type === "scatter";
  const font = `12px ${colors.font}`;
  const data: uPlot.AlignedData = [positions.values, ...chart.series.map((s) => s.values)];
  const legendValue = (_u: uPlot, v: number | null) =>
    v === null ? "" : formats.value(v, chart.format, "");
  const series: uPlot.Series[] = [
    {
      label: chart.categoryLabel,
      // The hovered x as the table writes it (the category), not its position.
      value: (_u, _v, _s, idx) =>
        idx === null || idx === undefined ? "" : formats.categoryFull(chart.categories[idx] ?? ""),
    },
    ...chart.series.map((s, i): uPlot.Series => {
      const stroke = seriesColor(chart, colors, i);
      return scatter
        ? {
            label: s.name,
            stroke,
            // No area is drawn (no paths); the fill colours the legend's marker.
            fill: stroke,
            width: 0,
            paths: () => null,
            points: { show: true, size: 7, fill: stroke, width: 0 },
            value: legendValue,
          }
        : {
            label: s.name,
            stroke,
            width: 2,
            spanGaps: false,
            points: {
              show: positions.values.length <= MAX_MARKED_POINTS,
              size: 5,
              fill: stroke,
            },
            value: legendValue,
          };
    }),
  ];
  const xAxis: uPlot.Axis = {
    scale: "x",
    stroke: colors.text,
    font,
    grid: { show: false },
    ticks: { show: false },
    space: time ? 80 : 50,
    values: (_u, splits, _axis, _space, step) =>
      splits.map((v) => (time ? timeTick(v, Number(step), formats) : formats.axis(v, "number"))),
  };
  const yAxis: uPlot.Axis = {
    scale: "y",
    stroke: colors.muted,
    font,
    grid: { stroke: colors.grid, width: 1 },
    ticks: { show: false },
    space: 30,
    values: (_u, splits) => splits.map((v) => formats.axis(v, chart.format)),
    size: (_u, values) => Math.ceil(measure(values ?? ["100%"], font)) + 18,
  };
  const values = positions.values;
  const last = values.length === 0 ? 0 : Math.max(...values);
  // The last x tick is centred on the plot's right edge: room for half of its label.
  const lastTicks = time
    ? [timeTick(last, DAY, formats), timeTick(last, 3600, formats)]
    : [formats.axis(last, "number")];
  const rightPad = Math.ceil(measure(lastTicks, font) / 2) + 4;
  const options: uPlot.Options = {
    width: initialWidth,
    height: HEIGHT,
    padding: [12, rightPad, 0, 0],
    series,
    // The answer's wall times are read as UTC: its ticks fall on their whole days and hours.
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
    scales: {
      // A scatter plot's points keep clear of the plot's edges; a line runs from edge to edge.
      x: scatter ? { time, range: (_u, min, max) => padded(min, max) } : { time },
      y: {
        range: (_u, min, max) =>
          scatter
            ? padded(Math.min(0, min), max)
            : [Math.min(0, min ?? 0), max > 0 ? max * 1.08 : 1],
      },
    },
    axes: [xAxis, yAxis],
    legend: { show: true, live: true },
    cursor: { drag: { x: false, y: false }, points: { show: false } },
    hooks: markCounter(target),
  };
  target.dataset.axis = positions.kind;
  let width = initialWidth;
  const plot = new uPlot(options, data, target);
  return {
    resize(next) {
      const nextWidth = Math.max(MIN_WIDTH, next);
      if (nextWidth === width) return;
      width = nextWidth;
      plot.setSize({ width, height: HEIGHT });
    },
    destroy() {
      plot.destroy();
    },
  };
}
