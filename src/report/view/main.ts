import {
  App,
  applyDocumentTheme,
  applyHostFonts,
  applyHostStyleVariables,
  type McpUiHostContext,
} from "@modelcontextprotocol/ext-apps";
import { withStatement } from "../answer-report.js";
import {
  isLang,
  LANG_LOCALES,
  type Lang,
  langOfLocale,
  type ReportMessages,
  type ReportText,
  reportText,
} from "../i18n/index.js";
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
import { drawBoxChart } from "./box-chart.js";
import { type DrawnChart, drawChart } from "./charts.js";
import { usableLocale } from "./locale-format.js";
import { resolveColors } from "./page-colors.js";

/**
 * The report page. With data embedded (the `report` command) it draws that, in the language the
 * file was written in (`<html lang>`); inside an MCP Apps host it connects with ext-apps' App,
 * draws each tool result the host sends, and speaks the host's locale (Korean for `ko*`, else
 * English; without a locale from the host, the browser's). It never asks the network for
 * anything: the data comes in the page or in the host's messages.
 *
 * A result is laid out once; after that a change of size only fits the charts to it, and a change
 * of theme, style or locale paints the charts and the text again in place (every text node knows
 * which part of the model it shows), so every figure keeps its Chart/Table choice and every table
 * its scroll. `data-renders` on #report counts the layouts, `data-paints` the paints (for tests).
 */

const root = document.getElementById("report") as HTMLElement;
root.dataset.renders = "0";
root.dataset.paints = "0";

interface FigureView {
  chart: Chart;
  /** The chart in a model, found again in the next one (same data, other words). */
  pick: (model: ReportModel) => Chart | undefined;
  figure: HTMLElement;
  canvasBox: HTMLElement;
  tableBody: HTMLElement;
  drawn?: DrawnChart;
}

/** Writes one part of the model (or of the catalogue) into the page again. */
type Binder = (model: ReportModel, m: ReportMessages) => void;

let figures: FigureView[] = [];
let binders: Binder[] = [];
/** What is shown: the result and where, or a status line. */
let shown: { data: unknown; place: ReportPlace; model: ReportModel } | undefined;
let status: { say: (m: ReportMessages) => string; error: boolean } | undefined;
let text: ReportText = textFor(navigator.language);

/** The language of a locale's tag, with that locale's figures. */
function textFor(locale: string | undefined, lang: Lang = langOfLocale(locale)): ReportText {
  return reportText(lang, locale);
}

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

/**
 * `node` shows `say(model, m)` now and again after each change of language or locale; `attr`
 * writes an attribute instead of the text.
 */
function bind<T extends HTMLElement>(
  node: T,
  say: (model: ReportModel, m: ReportMessages) => string,
  attr?: string,
): T {
  const write: Binder = (model, m) => {
    if (attr === undefined) node.textContent = say(model, m);
    else node.setAttribute(attr, say(model, m));
  };
  if (shown !== undefined) write(shown.model, text.m);
  binders.push(write);
  return node;
}

function clear(): void {
  for (const f of figures) f.drawn?.destroy();
  figures = [];
  binders = [];
  shown = undefined;
  status = undefined;
  root.replaceChildren();
}

function showStatus(say: (m: ReportMessages) => string, error = false): void {
  clear();
  status = { say, error };
  root.append(el("p", { className: error ? "status error" : "status", text: say(text.m) }));
  root.dataset.state = error ? "error" : "waiting";
  setDocumentLanguage(undefined);
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

function fillRows(body: HTMLElement, table: Table): void {
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
function tableElement(pick: (model: ReportModel) => Table | undefined, body = el("tbody")) {
  const caption = el("caption");
  const head = el("thead");
  const write: Binder = (model) => {
    const table = pick(model);
    if (table === undefined) return;
    caption.textContent = table.caption;
    tableHead(head, table);
    fillRows(body, table);
  };
  if (shown !== undefined) write(shown.model, text.m);
  binders.push(write);
  return el("div", { className: "table-wrap" }, el("table", {}, caption, head, body));
}

let figureCount = 0;

function figure(chart: Chart, pick: (model: ReportModel) => Chart | undefined): HTMLElement {
  const id = `fig-${++figureCount}`;
  const title = (model: ReportModel) => pick(model)?.title ?? "";
  const canvasBox = el("div", { className: "chart" });
  canvasBox.id = `${id}-chart`;
  canvasBox.dataset.chart = chart.id;
  canvasBox.dataset.type = chart.type;
  canvasBox.setAttribute("role", "img");
  bind(canvasBox, (model, m) => m.page.chartLabel(title(model)), "aria-label");
  const tableBody = el("tbody");
  // The cells are written by paint(), in the locale in force; the caption and head here.
  const tableBox = tableElement((model) => {
    const c = pick(model);
    return c === undefined ? undefined : { ...chartTable(c, text), rows: [] };
  }, tableBody);
  tableBox.id = `${id}-table`;
  tableBox.dataset.tableFor = chart.id;
  tableBox.hidden = true;
  const chartButton = bind(el("button"), (_model, m) => m.page.chart);
  const tableButton = bind(el("button"), (_model, m) => m.page.table);
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
  bind(views, (model, m) => m.page.viewsLabel(title(model)), "aria-label");
  fig.append(el("div", { className: "head" }, bind(el("h3"), title), views), canvasBox, tableBox);
  if (chart.note !== undefined) {
    fig.append(bind(el("p", { className: "note" }), (model) => pick(model)?.note ?? ""));
  }
  figures.push(view);
  return fig;
}

/** The width a figure gives its chart: its content box (also while the chart is hidden). */
function contentWidth(fig: HTMLElement): number {
  const style = getComputedStyle(fig);
  return fig.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
}

function sectionElement(section: Section, s: number): HTMLElement {
  const at = (model: ReportModel) => model.sections[s];
  const box = el(
    "section",
    {},
    bind(el("h2"), (model) => at(model)?.title ?? ""),
  );
  box.id = `section-${section.id}`;
  section.text.forEach((_, i) => {
    box.append(bind(el("p", { className: "muted" }), (model) => at(model)?.text[i] ?? ""));
  });
  section.charts.forEach((c, i) => {
    box.append(figure(c, (model) => at(model)?.charts[i]));
  });
  section.tables.forEach((_, i) => {
    box.append(tableElement((model) => at(model)?.tables[i]));
  });
  return box;
}

function render(data: unknown, place: ReportPlace): void {
  let model: ReportModel;
  try {
    model = buildReport(data, place, text);
  } catch (error) {
    const message = error instanceof ReportDataError ? undefined : String(error);
    // The model's own refusal is already in the page's language; anything else is quoted.
    const refusal = error instanceof ReportDataError ? error.message : "";
    showStatus((m) => (message === undefined ? refusal : m.page.cannotDraw(message)), true);
    return;
  }
  clear();
  shown = { data, place, model };
  figureCount = 0;
  const themeButton = bind(el("button", { className: "theme" }), (_model, m) => m.page.theme);
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
        bind(el("h1"), (md) => md.title),
        bind(el("p", { className: "subtitle" }), (md) => md.subtitle),
      ),
      themeButton,
    ),
  );
  const kpis = el("div", { className: "kpis" });
  model.kpis.forEach((k, i) => {
    const card = el(
      "div",
      { className: "kpi" },
      bind(el("div", { className: "label" }), (md) => md.kpis[i]?.label ?? ""),
      bind(el("div", { className: "value" }), (md) => md.kpis[i]?.value ?? ""),
    );
    if (k.note !== undefined) {
      card.append(bind(el("div", { className: "sub" }), (md) => md.kpis[i]?.note ?? ""));
    }
    kpis.append(card);
  });
  root.append(kpis);
  model.sections.forEach((s, i) => {
    root.append(sectionElement(s, i));
  });
  if (model.notes.length > 0) {
    const list = el("ul");
    model.notes.forEach((_, i) => {
      list.append(bind(el("li"), (md) => md.notes[i] ?? ""));
    });
    root.append(
      el(
        "section",
        {},
        bind(el("h2"), (_md, m) => m.page.warnings),
        list,
      ),
    );
  }
  setDocumentLanguage(model);
  root.dataset.renders = String(Number(root.dataset.renders) + 1);
  // Drawn once the figures are in the document, so they know their width.
  paint();
  root.dataset.state = "ready";
  root.dataset.kind = model.kind;
}

/** `<html lang>` and the title: what a screen reader, a translator and a tab show. */
function setDocumentLanguage(model: ReportModel | undefined): void {
  document.documentElement.lang = text.lang;
  document.title = text.m.page.title(model?.title ?? "");
}

/**
 * The page in the language and locale of `next`: the model is built again from the same data and
 * every bound text written again in place. The same data gives a model of the same shape, so
 * every node finds its part; the figures get their charts in the new words and are painted.
 */
function relabel(next: ReportText): void {
  text = next;
  if (shown === undefined) {
    if (status !== undefined) {
      const line = root.querySelector(".status");
      if (line !== null) line.textContent = status.say(text.m);
      setDocumentLanguage(undefined);
    }
    return;
  }
  let model: ReportModel;
  try {
    model = buildReport(shown.data, shown.place, text);
  } catch {
    render(shown.data, shown.place);
    return;
  }
  shown.model = model;
  for (const write of binders) write(model, text.m);
  for (const f of figures) f.chart = f.pick(model) ?? f.chart;
  setDocumentLanguage(model);
  paint();
}

/**
 * Charts and numbers drawn again in place, in the colours and locale in force: the layout, each
 * figure's Chart/Table choice and every scroll position stay.
 */
function paint(): void {
  const colors = resolveColors(root);
  for (const f of figures) {
    f.drawn?.destroy();
    f.drawn =
      f.chart.type === "box"
        ? drawBoxChart(f.chart, f.canvasBox, text)
        : drawChart(f.chart, f.canvasBox, colors, text.f, contentWidth(f.figure));
    fillRows(f.tableBody, chartTable(f.chart, text));
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
 * fitted to the new width, nothing is laid out again. Theme, style variables and fonts repaint;
 * a new locale writes the words and figures again.
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
  if (locale !== undefined && locale !== text.f.locale) {
    relabel(textFor(locale));
    return;
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
  let args: Record<string, unknown> | undefined;
  app.addEventListener("toolinput", (input) => {
    args = input.arguments;
    showStatus((m) => m.page.working);
  });
  app.addEventListener("toolresult", (result) => {
    if (result.isError === true) {
      // The tool's own text (for the model, in English) says what failed.
      const said = resultText(result.content);
      showStatus((m) => said || m.page.toolFailed, true);
    } else if (result.structuredContent === undefined) {
      showStatus((m) => m.page.noStructured, true);
    } else {
      render(withStatement(result.structuredContent, args), "view");
    }
  });
  app.addEventListener("toolcancelled", () => showStatus((m) => m.page.cancelled));
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
  // A file is in the language it was written in, with that language's own figures.
  const lang = document.documentElement.lang;
  if (isLang(lang)) text = textFor(LANG_LOCALES[lang], lang);
  try {
    render(JSON.parse(embedded), "file");
  } catch (error) {
    showStatus((m) => m.page.badEmbedded(String(error)), true);
  }
} else if (window.parent === window) {
  showStatus((m) => m.page.noData, true);
} else {
  showStatus((m) => m.page.waiting);
  connectToHost().catch((error: unknown) => {
    showStatus((m) => m.page.noHost(String(error)), true);
  });
}
