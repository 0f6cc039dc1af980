import { readFile } from "node:fs/promises";
import { builtFile } from "../package-files.js";
import type { Lang } from "./i18n/lang.js";

/**
 * The built report page (dist/report/view.html, made by scripts/build-report.mjs) and the same
 * page with data written in. Read on demand and kept: the server's cold start does not pay for it.
 */

const DATA_SLOT = '<script type="application/json" id="report-data"></script>';
/** The page's root element; its `lang` is the language a file is written in. */
const HTML_ROOT = /<html lang="[^"]*">/;

let cached: Promise<string> | undefined;

export function reportViewHtml(): Promise<string> {
  cached ??= loadView().catch((error: unknown) => {
    cached = undefined;
    throw error;
  });
  return cached;
}

async function loadView(): Promise<string> {
  const path = builtFile("report", "view.html");
  let html: string;
  try {
    html = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    throw new Error(`The report page is not built (${path}); run npm run build.`);
  }
  if (!html.includes(DATA_SLOT) || !HTML_ROOT.test(html)) {
    throw new Error(`${path} has no data slot; rebuild it with npm run build.`);
  }
  return html;
}

/**
 * The page with `data` embedded as JSON, to be drawn in `lang` (the page reads it from
 * `<html lang>`). `<` is written as \u003c so no text in the data (a campaign name, a carrier
 * message) can close the script element; JSON.parse reads it back.
 */
export async function reportHtmlWithData(data: unknown, lang: Lang = "en"): Promise<string> {
  const json = JSON.stringify(data)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
  const html = await reportViewHtml();
  return html
    .replace(HTML_ROOT, `<html lang="${lang}">`)
    .replace(DATA_SLOT, () => `<script type="application/json" id="report-data">${json}</script>`);
}
