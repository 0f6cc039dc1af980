import { chartTable } from "../model.js";
import { drawBoxChart } from "./box-chart.js";
import { drawChart } from "./charts.js";
import { resolveColors } from "./page-colors.js";
import type { PageState } from "./page-state.js";
import { contentWidth, fillRows } from "./report-elements.js";

/**
 * Charts and numbers drawn again in place, in the colours and locale in force: the layout, each
 * figure's Chart/Table choice and every scroll position stay.
 */
export function paint(page: PageState): void {
  const { root, text } = page;
  const colors = resolveColors(root);
  for (const f of page.figures) {
    f.drawn?.destroy();
    f.drawn =
      f.chart.type === "box"
        ? drawBoxChart(f.chart, f.canvasBox, text)
        : drawChart(f.chart, f.canvasBox, colors, text.f, contentWidth(f.figure));
    fillRows(f.tableBody, chartTable(f.chart, text));
  }
  root.dataset.paints = String(Number(root.dataset.paints) + 1);
}

export function fitCharts(page: PageState): void {
  for (const f of page.figures) {
    if (!f.canvasBox.hidden) f.drawn?.resize(contentWidth(f.figure));
  }
}
