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
import { type DrawnChart, drawChart, readTheme } from "./charts.js";

/**
 * The report page. With data embedded (the `report` command) it draws that; inside an MCP Apps
 * host it connects with ext-apps' App and draws each tool result the host sends. It never asks
 * the network for anything: the data comes in the page or in the host's messages.
 */

const root = document.getElementById("report") as HTMLElement;
let drawn: Array<{ chart: DrawnChart; element: HTMLElement }> = [];
let current: { data: unknown; place: ReportPlace } | undefined;

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
  for (const d of drawn) d.chart.destroy();
  drawn = [];
  root.replaceChildren();
}

function showStatus(text: string, error = false): void {
  clear();
  root.append(el("p", { className: error ? "status error" : "status", text }));
  root.dataset.state = error ? "error" : "waiting";
}

function tableElement(table: Table): HTMLElement {
  const head = el("tr");
  table.columns.forEach((c, i) => {
    const th = el("th", { text: c, className: table.numeric[i] ? "num" : "" });
    th.scope = "col";
    head.append(th);
  });
  const body = el("tbody");
  for (const row of table.rows) {
    const tr = el("tr");
    row.forEach((cell, i) => {
      tr.append(el("td", { text: cell, className: table.numeric[i] ? "num" : "" }));
    });
    body.append(tr);
  }
  return el(
    "div",
    { className: "table-wrap" },
    el("table", {}, el("caption", { text: table.caption }), el("thead", {}, head), body),
  );
}

let figureCount = 0;

function figure(chart: Chart, pending: Array<() => void>): HTMLElement {
  const id = `fig-${++figureCount}`;
  const canvasBox = el("div", { className: "chart" });
  canvasBox.id = `${id}-chart`;
  canvasBox.dataset.chart = chart.id;
  canvasBox.dataset.type = chart.type;
  canvasBox.setAttribute("role", "img");
  canvasBox.setAttribute("aria-label", `${chart.title}. The same data is in the table view.`);
  const tableBox = tableElement(chartTable(chart));
  tableBox.id = `${id}-table`;
  tableBox.dataset.tableFor = chart.id;
  tableBox.hidden = true;
  const chartButton = el("button", { text: "Chart" });
  const tableButton = el("button", { text: "Table" });
  const setView = (table: boolean) => {
    tableBox.hidden = !table;
    canvasBox.hidden = table;
    chartButton.setAttribute("aria-pressed", String(!table));
    tableButton.setAttribute("aria-pressed", String(table));
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
  const fig = el(
    "figure",
    {},
    el("div", { className: "head" }, el("h3", { text: chart.title }), views),
    canvasBox,
    tableBox,
  );
  if (chart.note !== undefined) fig.append(el("p", { className: "note", text: chart.note }));
  // Drawn once the figure is in the document, so it knows its width.
  pending.push(() => {
    drawn.push({ chart: drawChart(chart, canvasBox, readTheme(root)), element: canvasBox });
  });
  return fig;
}

function sectionElement(section: Section, pending: Array<() => void>): HTMLElement {
  const box = el("section", {}, el("h2", { text: section.title }));
  box.id = `section-${section.id}`;
  for (const t of section.text) box.append(el("p", { className: "muted", text: t }));
  for (const c of section.charts) box.append(figure(c, pending));
  for (const t of section.tables) box.append(tableElement(t));
  return box;
}

function render(data: unknown, place: ReportPlace): void {
  current = { data, place };
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
  const pending: Array<() => void> = [];
  const themeButton = el("button", { className: "theme", text: "Light / dark" });
  themeButton.type = "button";
  themeButton.addEventListener("click", () => {
    const dark = getComputedStyle(document.documentElement).colorScheme.includes("dark");
    document.documentElement.dataset.theme = dark ? "light" : "dark";
    redraw();
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
  for (const s of model.sections) root.append(sectionElement(s, pending));
  if (model.notes.length > 0) {
    const list = el("ul");
    for (const n of model.notes) list.append(el("li", { text: n }));
    root.append(el("section", {}, el("h2", { text: "Warnings" }), list));
  }
  for (const draw of pending) draw();
  root.dataset.state = "ready";
  root.dataset.kind = model.kind;
}

/** Charts read their colours from CSS when drawn, so a theme change draws them again. */
function redraw(): void {
  if (current !== undefined && root.dataset.state === "ready") render(current.data, current.place);
}

const resizeObserver = new ResizeObserver(() => {
  for (const d of drawn) d.chart.resize(d.element.clientWidth);
});
resizeObserver.observe(root);

function applyHostContext(ctx: McpUiHostContext | undefined): void {
  if (ctx === undefined) return;
  if (ctx.theme !== undefined) applyDocumentTheme(ctx.theme);
  if (ctx.styles?.variables !== undefined) applyHostStyleVariables(ctx.styles.variables);
  if (ctx.styles?.css?.fonts !== undefined) applyHostFonts(ctx.styles.css.fonts);
  redraw();
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
  app.ontoolinput = () => showStatus("Working on it: the chart appears when the tool returns.");
  app.ontoolresult = (result) => {
    if (result.isError === true) {
      showStatus(resultText(result.content) || "The tool call failed.", true);
    } else if (result.structuredContent === undefined) {
      showStatus("The tool result has no structured data to draw.", true);
    } else {
      render(result.structuredContent, "view");
    }
  };
  app.ontoolcancelled = () => showStatus("The tool call was cancelled.");
  app.onhostcontextchanged = (ctx) => applyHostContext(ctx);
  app.onteardown = async () => {
    resizeObserver.disconnect();
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
