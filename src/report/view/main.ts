import {
  App,
  applyDocumentTheme,
  applyHostFonts,
  applyHostStyleVariables,
  type McpUiHostContext,
} from "@modelcontextprotocol/ext-apps";
import { withStatement } from "../answer-report.js";
import { isLang, LANG_LOCALES, type ReportMessages, type ReportText } from "../i18n/index.js";
import { buildReport, ReportDataError, type ReportModel, type ReportPlace } from "../model.js";
import { usableLocale } from "./locale-format.js";
import { createPageState, type PageState, textFor } from "./page-state.js";
import { fitCharts, paint } from "./paint.js";
import { bind, el, sectionElement } from "./report-elements.js";

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

const page = createPageState(root, textFor(navigator.language));

new ResizeObserver(() => fitCharts(page)).observe(root);

// Without a host, the page follows the system's scheme; its colours are read again when it turns.
matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => {
  if (page.figures.length > 0) paint(page);
});

function clear(page: PageState): void {
  for (const f of page.figures) f.drawn?.destroy();
  page.figures = [];
  page.binders = [];
  page.shown = undefined;
  page.status = undefined;
  page.root.replaceChildren();
}

function showStatus(page: PageState, say: (m: ReportMessages) => string, error = false): void {
  clear(page);
  page.status = { say, error };
  page.root.append(
    el("p", { className: error ? "status error" : "status", text: say(page.text.m) }),
  );
  page.root.dataset.state = error ? "error" : "waiting";
  setDocumentLanguage(page, undefined);
}

function render(page: PageState, data: unknown, place: ReportPlace): void {
  const { root } = page;
  let model: ReportModel;
  try {
    model = buildReport(data, place, page.text);
  } catch (error) {
    const message = error instanceof ReportDataError ? undefined : String(error);
    // The model's own refusal is already in the page's language; anything else is quoted.
    const refusal = error instanceof ReportDataError ? error.message : "";
    showStatus(page, (m) => (message === undefined ? refusal : m.page.cannotDraw(message)), true);
    return;
  }
  clear(page);
  page.shown = { data, place, model };
  const themeButton = bind(page, el("button", { className: "theme" }), (_model, m) => m.page.theme);
  themeButton.type = "button";
  themeButton.addEventListener("click", () => {
    const dark = getComputedStyle(document.documentElement).colorScheme.includes("dark");
    document.documentElement.dataset.theme = dark ? "light" : "dark";
    paint(page);
  });
  root.append(
    el(
      "header",
      { className: "top" },
      el(
        "div",
        {},
        bind(page, el("h1"), (md) => md.title),
        bind(page, el("p", { className: "subtitle" }), (md) => md.subtitle),
      ),
      themeButton,
    ),
  );
  const kpis = el("div", { className: "kpis" });
  model.kpis.forEach((k, i) => {
    const card = el(
      "div",
      { className: "kpi" },
      bind(page, el("div", { className: "label" }), (md) => md.kpis[i]?.label ?? ""),
      bind(page, el("div", { className: "value" }), (md) => md.kpis[i]?.value ?? ""),
    );
    if (k.note !== undefined) {
      card.append(bind(page, el("div", { className: "sub" }), (md) => md.kpis[i]?.note ?? ""));
    }
    kpis.append(card);
  });
  root.append(kpis);
  model.sections.forEach((s, i) => {
    root.append(sectionElement(page, s, i));
  });
  if (model.notes.length > 0) {
    const list = el("ul");
    model.notes.forEach((_, i) => {
      list.append(bind(page, el("li"), (md) => md.notes[i] ?? ""));
    });
    root.append(
      el(
        "section",
        {},
        bind(page, el("h2"), (_md, m) => m.page.warnings),
        list,
      ),
    );
  }
  setDocumentLanguage(page, model);
  root.dataset.renders = String(Number(root.dataset.renders) + 1);
  // Drawn once the figures are in the document, so they know their width.
  paint(page);
  root.dataset.state = "ready";
  root.dataset.kind = model.kind;
}

/** `<html lang>` and the title: what a screen reader, a translator and a tab show. */
function setDocumentLanguage(page: PageState, model: ReportModel | undefined): void {
  document.documentElement.lang = page.text.lang;
  document.title = page.text.m.page.title(model?.title ?? "");
}

/**
 * The page in the language and locale of `next`: the model is built again from the same data and
 * every bound text written again in place. The same data gives a model of the same shape, so
 * every node finds its part; the figures get their charts in the new words and are painted.
 */
function relabel(page: PageState, next: ReportText): void {
  page.text = next;
  const { shown, status } = page;
  if (shown === undefined) {
    if (status !== undefined) {
      const line = page.root.querySelector(".status");
      if (line !== null) line.textContent = status.say(next.m);
      setDocumentLanguage(page, undefined);
    }
    return;
  }
  let model: ReportModel;
  try {
    model = buildReport(shown.data, shown.place, next);
  } catch {
    render(page, shown.data, shown.place);
    return;
  }
  shown.model = model;
  for (const write of page.binders) write(model, next.m);
  for (const f of page.figures) f.chart = f.pick(model) ?? f.chart;
  setDocumentLanguage(page, model);
  paint(page);
}

/**
 * What a host-context change asks for. A host sends one per resize of its frame (the reference
 * host, one for every step of a window resize), with only containerDimensions: the charts are
 * fitted to the new width, nothing is laid out again. Theme, style variables and fonts repaint;
 * a new locale writes the words and figures again.
 */
function applyHostContext(page: PageState, ctx: Partial<McpUiHostContext> | undefined): void {
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
  if (locale !== undefined && locale !== page.text.f.locale) {
    relabel(page, textFor(locale));
    return;
  }
  if (page.figures.length === 0) return;
  if (repaint) paint(page);
  else if (ctx.containerDimensions !== undefined) fitCharts(page);
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

async function connectToHost(page: PageState): Promise<void> {
  const app = new App({ name: "crm-insights-report", version: "1" }, {}, { autoResize: true });
  // Handlers before connect: the host may send the result right after the handshake.
  let args: Record<string, unknown> | undefined;
  app.addEventListener("toolinput", (input) => {
    args = input.arguments;
    showStatus(page, (m) => m.page.working);
  });
  app.addEventListener("toolresult", (result) => {
    if (result.isError === true) {
      // The tool's own text (for the model, in English) says what failed.
      const said = resultText(result.content);
      showStatus(page, (m) => said || m.page.toolFailed, true);
    } else if (result.structuredContent === undefined) {
      showStatus(page, (m) => m.page.noStructured, true);
    } else {
      render(page, withStatement(result.structuredContent, args), "view");
    }
  });
  app.addEventListener("toolcancelled", () => showStatus(page, (m) => m.page.cancelled));
  app.addEventListener("hostcontextchanged", (ctx) => applyHostContext(page, ctx));
  app.onteardown = async () => {
    clear(page);
    return {};
  };
  await app.connect();
  applyHostContext(page, app.getHostContext());
}

const embedded = document.getElementById("report-data")?.textContent?.trim() ?? "";
if (embedded !== "") {
  // A file is in the language it was written in, with that language's own figures.
  const lang = document.documentElement.lang;
  if (isLang(lang)) page.text = textFor(LANG_LOCALES[lang], lang);
  try {
    render(page, JSON.parse(embedded), "file");
  } catch (error) {
    showStatus(page, (m) => m.page.badEmbedded(String(error)), true);
  }
} else if (window.parent === window) {
  showStatus(page, (m) => m.page.noData, true);
} else {
  showStatus(page, (m) => m.page.waiting);
  connectToHost(page).catch((error: unknown) => {
    showStatus(page, (m) => m.page.noHost(String(error)), true);
  });
}
