import type { ReportMessages, ReportText } from "../i18n/index.js";
import { buildReport, ReportDataError, type ReportModel, type ReportPlace } from "../model.js";
import type { PageState } from "./page-state.js";
import { paint } from "./paint.js";
import { bind, el, sectionElement } from "./report-elements.js";

/**
 * What the page shows: a status line, or a result laid out once (render), then written again in
 * place in another language or locale (relabel, which lays the result out anew only when its
 * model cannot be built again).
 */

export function clear(page: PageState): void {
  for (const f of page.figures) f.drawn?.destroy();
  page.figures = [];
  page.binders = [];
  page.shown = undefined;
  page.status = undefined;
  page.root.replaceChildren();
}

export function showStatus(
  page: PageState,
  say: (m: ReportMessages) => string,
  error = false,
): void {
  clear(page);
  page.status = { say, error };
  page.root.append(
    el("p", { className: error ? "status error" : "status", text: say(page.text.m) }),
  );
  page.root.dataset.state = error ? "error" : "waiting";
  setDocumentLanguage(page, undefined);
}

export function render(page: PageState, data: unknown, place: ReportPlace): void {
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
export function relabel(page: PageState, next: ReportText): void {
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
