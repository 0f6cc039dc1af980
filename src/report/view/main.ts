import { isLang, LANG_LOCALES } from "../i18n/index.js";
import { connectToHost } from "./host-connection.js";
import { render, showStatus } from "./layout.js";
import { createPageState, textFor } from "./page-state.js";
import { fitCharts, paint } from "./paint.js";

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
 *
 * The modules: page-state.ts (the one state, made here), report-elements.ts (sections, figures
 * and tables bound to the model), layout.ts (status, layout, relabel), paint.ts (charts drawn and
 * fitted), host-connection.ts (the MCP Apps host).
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
