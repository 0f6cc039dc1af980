// Builds the report page (src/report/view) into one self-contained HTML file,
// dist/report/view.html: script and styles inlined, no external URL, so it loads under an MCP
// Apps host's default content security policy and as a file opened with no network.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { onlyEnglishZodLocales } from "./lib/only-english-zod-locales.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const view = join(root, "src/report/view");
const require = createRequire(import.meta.url);

const result = await build({
  entryPoints: [join(view, "main.ts")],
  bundle: true,
  minify: true,
  format: "iife",
  platform: "browser",
  target: ["es2022"],
  write: false,
  legalComments: "none",
  // Korean words as UTF-8 (3 bytes a syllable), not as escapes (6 bytes).
  charset: "utf8",
  plugins: [onlyEnglishZodLocales],
  logLevel: "warning",
});
const script = result.outputFiles[0].text;
const styles =
  readFileSync(require.resolve("uplot/dist/uPlot.min.css"), "utf8") +
  readFileSync(join(view, "style.css"), "utf8");

// An inline script or style ends at the first `</script` or `</style`, whatever the quoting.
const js = script.replace(/<\/(script)/gi, "<\\/$1");
const css = styles.replace(/<\/(style)/gi, "<\\/$1");
const template = readFileSync(join(view, "index.html"), "utf8");
const html = template.replace("/*STYLES*/", () => css).replace("/*SCRIPT*/", () => js);
if (html.includes("/*SCRIPT*/") || html.includes("/*STYLES*/")) {
  throw new Error("build-report: the template's placeholders were not replaced");
}
mkdirSync(join(root, "dist/report"), { recursive: true });
writeFileSync(join(root, "dist/report/view.html"), html);
console.log(`dist/report/view.html: ${(Buffer.byteLength(html) / 1024).toFixed(1)} KB`);
