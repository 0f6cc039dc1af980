import type uPlot from "uplot";
import type { Chart } from "../model.js";

/** What every chart drawer shares: the colours it is given, what it returns, text measures. */

/** Colours as the canvas takes them, already resolved by the browser (see color-probe.ts). */
export interface ChartColors {
  /** Category labels: readable on the chart's background. */
  text: string;
  /** Value ticks and the zero line: readable on the chart's background. */
  muted: string;
  grid: string;
  /** One per series, in order; `failed` for series that count failures. */
  series: string[];
  failed: string;
  font: string;
}

export interface DrawnChart {
  /** Fits the chart to `width`; the layout of its labels is chosen again if the width asks. */
  resize(width: number): void;
  destroy(): void;
}

/** Narrowest a chart is drawn: below it the figure scrolls. */
export const MIN_WIDTH = 280;

export function seriesColor(chart: Chart, colors: ChartColors, index: number): string {
  if (chart.series[index]?.failure === true) return colors.failed;
  return colors.series[index % Math.max(1, colors.series.length)] ?? colors.text;
}

let measureContext: CanvasRenderingContext2D | null | undefined;

/** The widest of `texts` in `font`, in CSS pixels. */
export function measure(texts: readonly string[], font: string): number {
  measureContext ??= document.createElement("canvas").getContext("2d");
  if (measureContext === null) return texts.reduce((a, t) => Math.max(a, t.length * 7), 0);
  measureContext.font = font;
  let widest = 0;
  for (const t of texts) widest = Math.max(widest, measureContext.measureText(t).width);
  return widest;
}

/**
 * uPlot hooks that count the marks drawn (a value present, in the drawn range) and write the
 * count to the container's `data-marks` after each draw, for the tests to compare with the data.
 */
export function markCounter(target: HTMLElement, after?: (u: uPlot) => void) {
  let marks = 0;
  target.dataset.marks = "0";
  return {
    drawClear: [
      () => {
        marks = 0;
      },
    ],
    drawSeries: [
      (u: uPlot, sidx: number) => {
        const values = u.data[sidx] as Array<number | null> | undefined;
        const [i0, i1] = u.series[sidx]?.idxs ?? [0, -1];
        if (values === undefined) return;
        for (let i = i0; i <= i1; i++) {
          if (values[i] !== null && values[i] !== undefined) marks++;
        }
      },
    ],
    draw: [
      (u: uPlot) => {
        after?.(u);
        target.dataset.marks = String(marks);
      },
    ],
  };
}
