import { readFile } from "node:fs/promises";

/**
 * The built report page (dist/report/view.html, made by scripts/build-report.mjs) and the same
 * page with data written in. Read on demand and kept: the server's cold start does not pay for it.
 */

const DATA_SLOT = '<script type="application/json" id="report-data"></script>';

/** From dist/report/ the page sits beside this module; from src/report/ (tests) in dist/. */
const CANDIDATES = [
  new URL("./view.html", import.meta.url),
  new URL("../../dist/report/view.html", import.meta.url),
];

let cached: Promise<string> | undefined;

export function reportViewHtml(): Promise<string> {
  cached ??= loadView().catch((error: unknown) => {
    cached = undefined;
    throw error;
  });
  return cached;
}

async function loadView(): Promise<string> {
  for (const url of CANDIDATES) {
    try {
      const html = await readFile(url, "utf8");
      if (!html.includes(DATA_SLOT)) {
        throw new Error(`${url.pathname} has no data slot; rebuild it with npm run build.`);
      }
      return html;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  throw new Error("The report page is not built (dist/report/view.html); run npm run build.");
}

/**
 * The page with `data` embedded as JSON. `<` is written as \u003c so no text in the data (a
 * campaign name, a carrier message) can close the script element; JSON.parse reads it back.
 */
export async function reportHtmlWithData(data: unknown): Promise<string> {
  const json = JSON.stringify(data)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
  const html = await reportViewHtml();
  return html.replace(
    DATA_SLOT,
    () => `<script type="application/json" id="report-data">${json}</script>`,
  );
}
