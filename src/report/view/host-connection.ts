import {
  App,
  applyDocumentTheme,
  applyHostFonts,
  applyHostStyleVariables,
  type McpUiHostContext,
} from "@modelcontextprotocol/ext-apps";
import { withStatement } from "../answer-report.js";
import { clear, relabel, render, showStatus } from "./layout.js";
import { usableLocale } from "./locale-format.js";
import { type PageState, textFor } from "./page-state.js";
import { fitCharts, paint } from "./paint.js";

/**
 * The page inside an MCP Apps host: ext-apps' App connects to it, each tool result it sends is
 * drawn, and its context (theme, style variables, fonts, locale, frame size) is followed.
 */

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

export async function connectToHost(page: PageState): Promise<void> {
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
