// Bundles the bin after tsc: dist/cli.js becomes one ESM file holding the MCP server's start
// (our modules, the MCP SDK, zod) with each lazily imported subcommand in its own chunk under
// dist/cli-chunks/, so starting the server reads a few files instead of ~260 modules.
// DuckDB (native) stays external (scripts/lib/bin-externals.mjs). The summary's worker thread (dist/analysis/campaign/tally-worker.js)
// is bundled in place too, sharing the chunks: it starts while the summary runs, and reading its
// ~25 modules one by one delayed its first row by about 50 ms. The library entry
// (dist/index.js) and every other module in dist/ stay as tsc wrote them: tests import them.
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { BIN_EXTERNAL_PACKAGES, NEVER_LOADED_PACKAGES, packageOf } from "./lib/bin-externals.mjs";
import { onlyEnglishZodLocales } from "./lib/only-english-zod-locales.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(root, "dist");
const entry = join(dist, "cli.js");
const worker = join(dist, "analysis", "campaign", "tally-worker.js");
const CHUNKS = "cli-chunks";

if (
  readFileSync(entry, "utf8").includes(`./${CHUNKS}/`) ||
  readFileSync(worker, "utf8").includes(`/${CHUNKS}/`)
) {
  throw new Error("build-bin: dist/cli.js or the worker is bundled already; run npm run build");
}

const result = await build({
  entryPoints: [entry, worker],
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: ["node22"],
  outdir: dist,
  outbase: dist,
  entryNames: "[dir]/[name]",
  chunkNames: `${CHUNKS}/[name]-[hash]`,
  // The inputs are tsc's dist/cli.js and worker, replaced in place.
  allowOverwrite: true,
  write: false,
  external: BIN_EXTERNAL_PACKAGES,
  metafile: true,
  // CommonJS packages in the bundle (pg, undici's parts) call require() for node's modules.
  banner: {
    js: "import { createRequire as __crmCreateRequire } from 'node:module'; const require = __crmCreateRequire(import.meta.url);",
  },
  plugins: [onlyEnglishZodLocales],
  // Less to read and parse at each start: about 25 ms of the server's cold start, measured.
  // Identifiers are kept, so a stack trace still names its functions; no source maps (tsc
  // writes none either, and the package ships none): debug from src/ or tsc's dist/ modules.
  minifyWhitespace: true,
  minifySyntax: true,
  // The licence comments of the bundled dependencies stay with their code.
  legalComments: "eof",
  logLevel: "warning",
});

// A package left for node_modules that is in neither list would be missing from the MCP Bundle.
const loaded = new Set(
  Object.values(result.metafile.outputs).flatMap((output) =>
    output.imports.filter((i) => i.external).map((i) => packageOf(i.path)),
  ),
);
const unlisted = [...loaded].filter(
  (p) =>
    p !== undefined && !BIN_EXTERNAL_PACKAGES.includes(p) && !NEVER_LOADED_PACKAGES.includes(p),
);
if (unlisted.length > 0) {
  throw new Error(
    `build-bin: the bundle would load ${unlisted.join(", ")} from node_modules; bundle it, or add it to BIN_EXTERNAL_PACKAGES in scripts/lib/bin-externals.mjs`,
  );
}

rmSync(join(dist, CHUNKS), { recursive: true, force: true });
let bytes = 0;
for (const file of result.outputFiles) {
  mkdirSync(dirname(file.path), { recursive: true });
  writeFileSync(file.path, file.contents);
  bytes += file.contents.length;
}
// tsc keeps the shebang, not the file mode.
chmodSync(entry, 0o755);
const chunks = result.outputFiles.filter((f) => f.path !== entry && f.path !== worker).length;
console.log(
  `${relative(root, entry)} and ${relative(root, worker)}: bundled with ${chunks} chunks in dist/${CHUNKS}/, ${(bytes / 1024).toFixed(0)} KB`,
);
