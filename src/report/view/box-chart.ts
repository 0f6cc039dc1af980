import type { ReportText } from "../i18n/index.js";
import { type Chart, rangeWord } from "../model.js";
import { rowScale } from "./box-scale.js";
import type { DrawnChart } from "./chart-kit.js";

/**
 * A box chart (model type "box") in HTML, one row per category: its name, the dot's value and
 * the median, the range word of a flagged value, then a track with the box (25th to 75th
 * percentile), the median line and the dot, over an axis in percent of the row's own range
 * (rates of one campaign differ by tens of times, a shared axis would flatten the small ones).
 * Laid out by CSS, so it fits any width without drawing again; its colours are the page's
 * variables, so a theme change needs nothing either. `data-marks` counts the dots drawn.
 */

interface Row {
  name: string;
  value: number | null;
  median: number | null;
  p25: number | null;
  p75: number | null;
  flag: "above" | "below" | null;
}

function el(tag: string, className: string, text?: string): HTMLElement {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function rows(chart: Chart): Row[] {
  const at = (s: number, i: number) => chart.series[s]?.values[i] ?? null;
  return chart.categories.map((name, i) => ({
    name,
    value: at(0, i),
    median: at(1, i),
    p25: at(2, i),
    p75: at(3, i),
    flag: chart.flags?.[i] ?? null,
  }));
}

export function drawBoxChart(chart: Chart, target: HTMLElement, text: ReportText): DrawnChart {
  const { f } = text;
  const pct = (v: number | null) => f.value(v, chart.format, text.m.page.missing);
  let dots = 0;
  const list = el("div", "box-rows");
  rows(chart).forEach((row, i) => {
    const item = el("div", "box-row");
    item.dataset.flag = row.flag ?? "";
    const head = el("div", "box-head");
    head.append(el("span", "box-name", row.name), el("span", "box-value", pct(row.value)));
    head.append(el("span", "box-median-text", `${chart.series[1]?.name ?? ""} ${pct(row.median)}`));
    if (row.flag !== null) {
      const arrow = row.flag === "above" ? "▲" : "▼";
      head.append(el("span", "box-flag", `${arrow} ${rangeWord(chart, i, text)}`));
    }
    item.append(head);
    const known = [row.value, row.median, row.p25, row.p75].filter((v): v is number => v !== null);
    if (known.length > 0) {
      const { lo, hi, ticks } = rowScale(known);
      const at = (v: number) => `${(((v - lo) / (hi - lo)) * 100).toFixed(2)}%`;
      const track = el("div", "box-track");
      if (row.p25 !== null && row.p75 !== null) {
        const box = el("div", "box-iqr");
        box.style.left = at(row.p25);
        box.style.width = `${(((row.p75 - row.p25) / (hi - lo)) * 100).toFixed(2)}%`;
        track.append(box);
      }
      if (row.median !== null) {
        const line = el("div", "box-median");
        line.style.left = at(row.median);
        track.append(line);
      }
      if (row.value !== null) {
        const dot = el("div", "box-dot");
        dot.style.left = at(row.value);
        track.append(dot);
        dots++;
      }
      const axis = el("div", "box-axis");
      for (const tick of ticks) {
        const label = el("span", "box-tick", f.axis(tick, chart.format));
        label.style.left = at(tick);
        axis.append(label);
      }
      item.append(track, axis);
    }
    list.append(item);
  });
  target.replaceChildren(list);
  target.dataset.marks = String(dots);
  target.dataset.labels = JSON.stringify(chart.categories);
  return {
    // The rows are laid out by CSS in percent of their width.
    resize: () => {},
    destroy: () => target.replaceChildren(),
  };
}
