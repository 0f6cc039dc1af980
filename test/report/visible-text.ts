import type { Page } from "playwright-core";
import { inPage } from "./browser-support.js";

/**
 * English words in a text: runs of Latin letters (with digits, `_` and inner `-`, so a code name
 * such as `crm-insights-mcp` or `summarize_export` is one word), less the `allowed` ones (code
 * names, units, values of the data). What a Korean page must not show.
 */
export function englishWords(text: string, allowed: Iterable<string>): string[] {
  const ok = new Set(allowed);
  return (text.match(/_?[A-Za-z][A-Za-z0-9_-]*/g) ?? [])
    .map((w) => w.replace(/-+$/, ""))
    .filter((w) => !ok.has(w));
}

/**
 * Every word of the values in `data` (a tool result) that come from the file: names, IDs, codes,
 * carrier messages. The analysis' own sentences (`summary`, `note`, `verdict`, `warnings`) are
 * ours, in English for the model, and must not excuse an English word on a Korean page.
 */
export function dataWords(data: unknown): string[] {
  const ours = new Set(["summary", "note", "verdict", "warnings"]);
  const words = new Set<string>();
  const walk = (v: unknown): void => {
    if (typeof v === "string") {
      for (const w of v.match(/_?[A-Za-z][A-Za-z0-9_-]*/g) ?? []) words.add(w.replace(/-+$/, ""));
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (typeof v === "object" && v !== null) {
      for (const [key, value] of Object.entries(v)) if (!ours.has(key)) walk(value);
    }
  };
  walk(data);
  return [...words];
}

/**
 * What a reader of the page gets, as text: the title, every text node of the body (tables behind
 * their Chart/Table switch included), the labels screen readers read and the category labels drawn
 * on the canvases. Scripts and styles are not text.
 */
export function pageText(page: Pick<Page, "evaluate">): Promise<string[]> {
  return inPage<string[]>(
    page,
    `(() => {
      const out = [document.title];
      const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, {
        acceptNode: (n) => n.parentElement?.closest("script, style") ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT,
      });
      for (let n = walker.nextNode(); n !== null; n = walker.nextNode()) {
        const t = n.textContent.trim();
        if (t !== "") out.push(t);
      }
      for (const e of document.querySelectorAll("[aria-label]")) out.push(e.getAttribute("aria-label"));
      for (const e of document.querySelectorAll("[data-labels]")) out.push(...JSON.parse(e.dataset.labels));
      return out;
    })()`,
  );
}
