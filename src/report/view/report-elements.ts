import type { ReportMessages } from "../i18n/index.js";
import { type Chart, chartTable, type ReportModel, type Section, type Table } from "../model.js";
import type { Binder, FigureView, PageState } from "./page-state.js";

/**
 * The DOM of a report's parts: sections, figures and tables. Every text node is bound to the part
 * of the model it shows (a binder in `page.binders`), so a change of language writes it again in
 * place; each figure is listed in `page.figures` for paint() to draw.
 */

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: { className?: string; text?: string } = {},
  ...children: Node[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (props.className !== undefined) node.className = props.className;
  if (props.text !== undefined) node.textContent = props.text;
  for (const child of children) node.append(child);
  return node;
}

/**
 * `node` shows `say(model, m)` now and again after each change of language or locale; `attr`
 * writes an attribute instead of the text.
 */
export function bind<T extends HTMLElement>(
  page: PageState,
  node: T,
  say: (model: ReportModel, m: ReportMessages) => string,
  attr?: string,
): T {
  const write: Binder = (model, m) => {
    if (attr === undefined) node.textContent = say(model, m);
    else node.setAttribute(attr, say(model, m));
  };
  if (page.shown !== undefined) write(page.shown.model, page.text.m);
  page.binders.push(write);
  return node;
}

function tableHead(head: HTMLElement, table: Table): void {
  const row = el("tr");
  table.columns.forEach((c, i) => {
    const th = el("th", { text: c, className: table.numeric[i] ? "num" : "" });
    th.scope = "col";
    row.append(th);
  });
  head.replaceChildren(row);
}

export function fillRows(body: HTMLElement, table: Table): void {
  body.replaceChildren(
    ...table.rows.map((row, r) => {
      const tr = el("tr");
      row.forEach((cell, i) => {
        const tone = table.tones?.[r]?.[i];
        const className = [table.numeric[i] ? "num" : "", tone ? `tone-${tone}` : ""].join(" ");
        tr.append(el("td", { text: cell, className: className.trim() }));
      });
      return tr;
    }),
  );
}

/**
 * A table of the model (`pick` finds it in any model of the same data). Its caption, head and
 * rows are written again in place on a change of language; the wrapper, and so its scroll, stays.
 */
function tableElement(
  page: PageState,
  pick: (model: ReportModel) => Table | undefined,
  body = el("tbody"),
) {
  const caption = el("caption");
  const head = el("thead");
  const write: Binder = (model) => {
    const table = pick(model);
    if (table === undefined) return;
    caption.textContent = table.caption;
    tableHead(head, table);
    fillRows(body, table);
  };
  if (page.shown !== undefined) write(page.shown.model, page.text.m);
  page.binders.push(write);
  return el("div", { className: "table-wrap" }, el("table", {}, caption, head, body));
}

function figure(
  page: PageState,
  chart: Chart,
  pick: (model: ReportModel) => Chart | undefined,
): HTMLElement {
  // Numbered in the order laid out: `page.figures` holds those before this one.
  const id = `fig-${page.figures.length + 1}`;
  const title = (model: ReportModel) => pick(model)?.title ?? "";
  const canvasBox = el("div", { className: "chart" });
  canvasBox.id = `${id}-chart`;
  canvasBox.dataset.chart = chart.id;
  canvasBox.dataset.type = chart.type;
  canvasBox.setAttribute("role", "img");
  bind(page, canvasBox, (model, m) => m.page.chartLabel(title(model)), "aria-label");
  const tableBody = el("tbody");
  // The cells are written by paint(), in the locale in force; the caption and head here.
  const tableBox = tableElement(
    page,
    (model) => {
      const c = pick(model);
      return c === undefined ? undefined : { ...chartTable(c, page.text), rows: [] };
    },
    tableBody,
  );
  tableBox.id = `${id}-table`;
  tableBox.dataset.tableFor = chart.id;
  tableBox.hidden = true;
  const chartButton = bind(page, el("button"), (_model, m) => m.page.chart);
  const tableButton = bind(page, el("button"), (_model, m) => m.page.table);
  const fig = el("figure");
  const view: FigureView = { chart, pick, figure: fig, canvasBox, tableBody };
  const setView = (table: boolean) => {
    tableBox.hidden = !table;
    canvasBox.hidden = table;
    chartButton.setAttribute("aria-pressed", String(!table));
    tableButton.setAttribute("aria-pressed", String(table));
    // A hidden chart was not fitted to size changes meanwhile.
    if (!table) view.drawn?.resize(contentWidth(fig));
  };
  chartButton.type = "button";
  tableButton.type = "button";
  chartButton.setAttribute("aria-controls", canvasBox.id);
  tableButton.setAttribute("aria-controls", tableBox.id);
  chartButton.addEventListener("click", () => setView(false));
  tableButton.addEventListener("click", () => setView(true));
  setView(false);
  const views = el("div", { className: "views" }, chartButton, tableButton);
  views.setAttribute("role", "group");
  bind(page, views, (model, m) => m.page.viewsLabel(title(model)), "aria-label");
  fig.append(
    el("div", { className: "head" }, bind(page, el("h3"), title), views),
    canvasBox,
    tableBox,
  );
  if (chart.note !== undefined) {
    fig.append(bind(page, el("p", { className: "note" }), (model) => pick(model)?.note ?? ""));
  }
  page.figures.push(view);
  return fig;
}

/** The width a figure gives its chart: its content box (also while the chart is hidden). */
export function contentWidth(fig: HTMLElement): number {
  const style = getComputedStyle(fig);
  return fig.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
}

export function sectionElement(page: PageState, section: Section, s: number): HTMLElement {
  const at = (model: ReportModel) => model.sections[s];
  const box = el(
    "section",
    {},
    bind(page, el("h2"), (model) => at(model)?.title ?? ""),
  );
  box.id = `section-${section.id}`;
  section.text.forEach((_, i) => {
    box.append(bind(page, el("p", { className: "muted" }), (model) => at(model)?.text[i] ?? ""));
  });
  section.charts.forEach((c, i) => {
    box.append(figure(page, c, (model) => at(model)?.charts[i]));
  });
  section.tables.forEach((_, i) => {
    box.append(tableElement(page, (model) => at(model)?.tables[i]));
  });
  return box;
}
