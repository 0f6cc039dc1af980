import {
  App,
  applyDocumentTheme,
  applyHostFonts,
  applyHostStyleVariables,
  type McpUiHostContext,
} from "@modelcontextprotocol/ext-apps";
import {
  buildReport,
  type Chart,
  chartTable,
  ReportDataError,
  type ReportModel,
  type ReportPlace,
  type Section,
  type Table,
} from "../model.js";
import { type DrawnChart, drawChart } from "./charts.js";
import { type Formats, formatsFor, usableLocale } from "./locale-format.js";
import { resolveColors } from "./page-colors.js";

/**
 * The report page. With data embedded (the `report` command) it draws that; inside an MCP Apps
 * host it connects with ext-apps' App and draws each tool result the host sends. It never asks
 * the network for anything: the data comes in the page or in the host's messages.
 *
 * A result is laid out once; after that a change of size only fits the charts to it, and a change
 * of theme, style or locale paints the charts and the numbers again in place, so every figure
 * keeps its Chart/Table choice and every table its scroll. `data-renders` on #report counts the
 * layouts, `data-paints` the paints (for tests).
 */

const root = document.getElementById("report") as HTMLElement;
root.dataset.renders = "0";
root.dataset.paints = "0";

interface FigureView {
  chart: Chart;
  figure: HTMLElement;
  canvasBox: HTMLElement;
  tableBody: HTMLElement;
  drawn?: DrawnChart;
}

let figures: FigureView[] = [];
let formats: Formats = formatsFor(navigator.language);

function el<K extends keyof HTMLElementTagNameMap>(
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

function clear(): void {
  for (const f of figures) f.drawn?.destroy();
  figures = [];
  root.replaceChildren();
}

function showStatus(text: string, error = false): void {
  clear();
  root.append(el("p", { className: error ? "status error" : "status", text }));
  root.dataset.state = error ? "error" : "waiting";
}

function tableHead(table: Table): HTMLElement {
  const head = el("tr");
  table.columns.forEach((c, i) => {
    const th = el("th", { text: c, className: table.numeric[i] ? "num" : "" });
    th.scope = "col";
    head.append(th);
  });
  return el("thead", {}, head);
}

function fillRows(body: HTMLElement, table: Table): void {
  body.replaceChildren(
    ...table.rows.map((row) => {
      const tr = el("tr");
      row.forEach((cell, i) => {
        tr.append(el("td", { text: cell, className: table.numeric[i] ? "num" : "" }));
      });
      return tr;
    }),
  );
}

function tableElement(table: Table, body = el("tbody")): HTMLElement {
  fillRows(body, table);
  return el(
    "div",
    { className: "table-wrap" },
    el("table", {}, el("caption", { text: table.caption }), tableHead(table), body),
  );
}

/**
 * A chart's table view with its numbers written in the locale in force: the model's table
 * (captions, columns, category names) with each series' cells formatted here.
 */
function localTable(chart: Chart): Table {
  const table = chartTable(chart);
  if (table.columns.length !== chart.series.length + 1) return table;
  const write = (v: number | null | undefined) =>
    chart.type === "interval" ? formats.signed(v, chart.format) : formats.value(v, chart.format);
  return {
    ...table,
    rows: table.rows.map((row, r) => [
      row[0] ?? "",
      ...chart.series.map((s) => write(s.values[r])),
    ]),
  };
}

let figureCount = 0;

function figure(chart: Chart): HTMLElement {
  const id = `fig-${++figureCount}`;
  const canvasBox = el("div", { className: "chart" });
  canvasBox.id = `${id}-chart`;
  canvasBox.dataset.chart = chart.id;
  canvasBox.dataset.type = chart.type;
  canvasBox.setAttribute("role", "img");
  canvasBox.setAttribute("aria-label", `${chart.title}. The same data is in the table view.`);
  const tableBody = el("tbody");
  const tableBox = tableElement(localTable(chart), tableBody);
  tableBox.id = `${id}-table`;
  tableBox.dataset.tableFor = chart.id;
  tableBox.hidden = true;
  const chartButton = el("button", { text: "Chart" });
  const tableButton = el("button", { text: "Table" });
  const fig = el("figure");
  const view: FigureView = { chart, figure: fig, canvasBox, tableBody };
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
  views.setAttribute("aria-label", `View of ${chart.title}`);
  fig.append(
    el("div", { className: "head" }, el("h3", { text: chart.title }), views),
    canvasBox,
    tableBox,
  );
  if (chart.note !== undefined) fig.append(el("p", { className: "note", text: chart.note }));
  figures.push(view);
  return fig;
}

/** The width a figure gives its chart: its content box (also while the chart is hidden). */
function contentWidth(fig: HTMLElement): number {
  const style = getComputedStyle(fig);
  return fig.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
}

function sectionElement(section: Section): HTMLElement {
  const box = el("section", {}, el("h2", { text: section.title }));
  box.id = `section-${section.id}`;
  for (const t of section.text) box.append(el("p", { className: "muted", text: t }));
  for (const c of section.charts) box.append(figure(c));
  for (const t of section.tables) box.append(tableElement(t));
  return box;
}

function render(data: unknown, place: ReportPlace): void {
  let model: ReportModel;
  try {
    model = buildReport(data, place);
  } catch (error) {
    showStatus(
      error instanceof ReportDataError
        ? error.message
        : `Cannot draw this result: ${String(error)}`,
      true,
    );
    return;
  }
  clear();
  figureCount = 0;
  const themeButton = el("button", { className: "theme", text: "Light / dark" });
  themeButton.type = "button";
  themeButton.addEventListener("click", () => {
    const dark = getComputedStyle(document.documentElement).colorScheme.includes("dark");
    document.documentElement.dataset.theme = dark ? "light" : "dark";
    paint();
  });
  root.append(
    el(
      "header",
      { className: "top" },
      el(
        "div",
        {},
        el("h1", { text: model.title }),
        el("p", { className: "subtitle", text: model.subtitle }),
      ),
      themeButton,
    ),
  );
  const kpis = el("div", { className: "kpis" });
  for (const k of model.kpis) {
    const card = el(
      "div",
      { className: "kpi" },
      el("div", { className: "label", text: k.label }),
      el("div", { className: "value", text: k.value }),
    );
    if (k.note !== undefined) card.append(el("div", { className: "sub", text: k.note }));
    kpis.append(card);
  }
  root.append(kpis);
  for (const s of model.sections) root.append(sectionElement(s));
  if (model.notes.length > 0) {
    const list = el("ul");
    for (const n of model.notes) list.append(el("li", { text: n }));
    root.append(el("section", {}, el("h2", { text: "Warnings" }), list));
  }
  root.dataset.renders = String(Number(root.dataset.renders) + 1);
  // Drawn once the figures are in the document, so they know their width.
  paint();
  root.dataset.state = "ready";
  root.dataset.kind = model.kind;
}

/**
 * Charts and numbers drawn again in place, in the colours and locale in force: the layout, each
 * figure's Chart/Table choice and every scroll position stay.
 */
function paint(): void {
  const colors = resolveColors(root);
  for (const f of figures) {
    f.drawn?.destroy();
    f.drawn = drawChart(f.chart, f.canvasBox, colors, formats, contentWidth(f.figure));
    fillRows(f.tableBody, localTable(f.chart));
  }
  root.dataset.paints = String(Number(root.dataset.paints) + 1);
}

function fitCharts(): void {
  for (const f of figures) {
    if (!f.canvasBox.hidden) f.drawn?.resize(contentWidth(f.figure));
  }
}

new ResizeObserver(fitCharts).observe(root);

// Without a host, the page follows the system's scheme; its colours are read again when it turns.
matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => {
  if (figures.length > 0) paint();
});

/**
 * What a host-context change asks for. A host sends one per resize of its frame (the reference
 * host, one for every step of a window resize), with only containerDimensions: the charts are
 * fitted to the new width, nothing is laid out again. Theme, style variables, fonts and locale
 * repaint.
 */
function applyHostContext(ctx: Partial<McpUiHostContext> | undefined): void {
  if (ctx === undefined) return;
  let repaint = false;
  if (ctx.theme !== undefined) {
    applyDocumentTheme(ctx.theme);
    repaint = true;
  }
  if (ctx.styles?.variables !== undefined) {
    applyHostStyleVariables(ctx.styles.variables);
    repaint = true;
  }
  if (ctx.styles?.css?.fonts !== undefined) {
    applyHostFonts(ctx.styles.css.fonts);
    repaint = true;
  }
  // A tag Intl does not know is ignored: the page keeps the locale it writes in.
  const locale = usableLocale(ctx.locale);
  if (locale !== undefined && locale !== formats.locale) {
    formats = formatsFor(locale);
    repaint = true;
  }
  if (figures.length === 0) return;
  if (repaint) paint();
  else if (ctx.containerDimensions !== undefined) fitCharts();
}

function resultText(content: unknown): string {
  if (!Array.isArray(content)) return "";
  return content
    .map((c: unknown) =>
      typeof c === "object" && c !== null && (c as { type?: unknown }).type === "text"
        ? String((c as { text?: unknown }).text ?? "")
        : "",
    )
    .join("\n")
    .trim();
}

async function connectToHost(): Promise<void> {
  const app = new App({ name: "crm-insights-report", version: "1" }, {}, { autoResize: true });
  // Handlers before connect: the host may send the result right after the handshake.
  app.addEventListener("toolinput", () =>
    showStatus("Working on it: the chart appears when the tool returns."),
  );
  app.addEventListener("toolresult", (result) => {
    if (result.isError === true) {
      showStatus(resultText(result.content) || "The tool call failed.", true);
    } else if (result.structuredContent === undefined) {
      showStatus("The tool result has no structured data to draw.", true);
    } else {
      render(result.structuredContent, "view");
    }
  });
  app.addEventListener("toolcancelled", () => showStatus("The tool call was cancelled."));
  app.addEventListener("hostcontextchanged", (ctx) => applyHostContext(ctx));
  app.onteardown = async () => {
    clear();
    return {};
  };
  await app.connect();
  applyHostContext(app.getHostContext());
}

const embedded = document.getElementById("report-data")?.textContent?.trim() ?? "";
if (embedded !== "") {
  try {
    render(JSON.parse(embedded), "file");
  } catch (error) {
    showStatus(`The embedded report data is not valid JSON: ${String(error)}`, true);
  }
} else if (window.parent === window) {
  showStatus(
    "No data: this page draws a tool result inside an MCP Apps host, or data written into it by `crm-insights-mcp report FILE --out PATH.html`.",
    true,
  );
} else {
  connectToHost().catch((error: unknown) => {
    showStatus(`Could not connect to the host: ${String(error)}`, true);
  });
}
