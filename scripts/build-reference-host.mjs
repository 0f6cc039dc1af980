// Builds the ext-apps reference host (examples/basic-host of modelcontextprotocol/ext-apps,
// vendored unchanged in test/reference-host/basic-host at the commit named in upstream.json) into
// two self-contained pages, index.html (the host: React UI, AppBridge) and sandbox.html (the
// sandbox proxy), the way its own vite build does with vite-plugin-singlefile: script and styles
// inline. esbuild replaces vite here because it is already a devDependency; the sources are
// theirs, and only what the build must change is changed, by this script, in memory:
// - the MCP SDK: upstream imports the 1.x SDK (@modelcontextprotocol/sdk/client/*.js); ext-apps
//   2.x, which this project depends on, takes a client of the 2.x SDK (@modelcontextprotocol/
//   client), which exports the same three classes (Client, StreamableHTTPClientTransport,
//   SSEClientTransport). Their type-only imports are erased.
// - the sandbox's address: upstream names http://localhost:8081/sandbox.html; a test serves the
//   sandbox on a free port instead, so runs never collide on a fixed one.
// Every vendored file is checked against the upstream blob hash first: a changed file stops the
// build. Usage: node scripts/build-reference-host.mjs --out DIR [--sandbox-url URL]
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const HOST_DIR = join(root, "test/reference-host/basic-host");
const MANIFEST = join(root, "test/reference-host/upstream.json");
export const UPSTREAM_SANDBOX_URL = "http://localhost:8081/sandbox.html";

/** The 1.x SDK modules upstream imports values from, and the 2.x package that replaces them. */
const SDK_MODULES = new Set([
  "@modelcontextprotocol/sdk/client/index.js",
  "@modelcontextprotocol/sdk/client/sse.js",
  "@modelcontextprotocol/sdk/client/streamableHttp.js",
]);

/** Git's blob hash of a file's bytes: what `git hash-object` prints. */
function blobHash(bytes) {
  return createHash("sha1").update(`blob ${bytes.length}\0`).update(bytes).digest("hex");
}

/** Fails unless every vendored file is the upstream one, byte for byte. */
export function checkVendoredFiles() {
  const manifest = JSON.parse(readFileSync(MANIFEST, "utf8"));
  for (const [file, hash] of Object.entries(manifest.files)) {
    if (!/^[0-9a-f]{40}$/.test(hash)) continue;
    const actual = blobHash(readFileSync(join(HOST_DIR, file)));
    if (actual !== hash) {
      throw new Error(
        `build-reference-host: ${relative(root, join(HOST_DIR, file))} is not upstream's file at ${manifest.commit} (blob ${actual}, expected ${hash}); restore it from there instead of editing it`,
      );
    }
  }
  return manifest;
}

/** The 1.x SDK's client modules resolved to the 2.x client; any other 1.x import fails. */
const sdkTwo = {
  name: "sdk-1-to-2",
  setup(b) {
    b.onResolve({ filter: /^@modelcontextprotocol\/sdk(\/|$)/ }, async (args) => {
      if (!SDK_MODULES.has(args.path)) {
        return { errors: [{ text: `no 2.x replacement is known for ${args.path}` }] };
      }
      return b.resolve("@modelcontextprotocol/client", {
        kind: args.kind,
        resolveDir: args.resolveDir,
      });
    });
  },
};

/** implementation.ts with the sandbox proxy's address replaced (exactly one occurrence). */
function sandboxAddress(sandboxUrl) {
  const file = join(HOST_DIR, "src/implementation.ts");
  return {
    name: "sandbox-address",
    setup(b) {
      b.onLoad({ filter: /[\\/]implementation\.ts$/ }, (args) => {
        if (args.path !== file) return undefined;
        const source = readFileSync(file, "utf8");
        const literal = JSON.stringify(UPSTREAM_SANDBOX_URL);
        const parts = source.split(literal);
        if (parts.length !== 2) {
          return {
            errors: [
              { text: `expected ${literal} once in implementation.ts, found ${parts.length - 1}` },
            ],
          };
        }
        return { contents: parts.join(JSON.stringify(sandboxUrl)), loader: "ts" };
      });
    },
  };
}

async function bundle(entry, plugins) {
  const result = await build({
    entryPoints: [join(HOST_DIR, entry)],
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    target: ["chrome120"],
    jsx: "automatic",
    tsconfig: join(HOST_DIR, "tsconfig.json"),
    define: { "process.env.NODE_ENV": '"production"' },
    write: false,
    outdir: "out",
    legalComments: "inline",
    plugins,
    logLevel: "warning",
  });
  const find = (ext) => result.outputFiles.find((f) => f.path.endsWith(ext))?.text ?? "";
  return { js: find(".js"), css: find(".css") };
}

/** Replaces `tag` in `html` (it must occur once) with `replacement`. */
function replaceOnce(html, tag, replacement, page) {
  const parts = html.split(tag);
  if (parts.length !== 2) {
    throw new Error(
      `build-reference-host: expected ${tag} once in ${page}, found ${parts.length - 1}`,
    );
  }
  return parts.join(replacement);
}

// An inline script or style ends at the first `</script` or `</style`, whatever the quoting.
const inlineScript = (js) =>
  `<script type="module">${js.replace(/<\/(script)/gi, "<\\/$1")}</script>`;
const inlineStyle = (css) => `<style>${css.replace(/<\/(style)/gi, "<\\/$1")}</style>`;

/** Writes index.html and sandbox.html into `outDir`; returns their paths. */
export async function buildReferenceHost({ outDir, sandboxUrl = UPSTREAM_SANDBOX_URL }) {
  checkVendoredFiles();
  mkdirSync(outDir, { recursive: true });
  const [host, globalCss, sandbox] = await Promise.all([
    bundle("src/index.tsx", [sdkTwo, sandboxAddress(sandboxUrl)]),
    bundle("src/global.css", []),
    bundle("src/sandbox.ts", [sdkTwo]),
  ]);
  let index = readFileSync(join(HOST_DIR, "index.html"), "utf8");
  index = replaceOnce(
    index,
    '<link rel="stylesheet" href="/src/global.css">',
    inlineStyle(globalCss.css + host.css),
    "index.html",
  );
  index = replaceOnce(
    index,
    '<script src="/src/index.tsx" type="module"></script>',
    inlineScript(host.js),
    "index.html",
  );
  const sandboxHtml = replaceOnce(
    readFileSync(join(HOST_DIR, "sandbox.html"), "utf8"),
    '<script type="module" src="/src/sandbox.ts"></script>',
    inlineScript(sandbox.js),
    "sandbox.html",
  );
  const files = { index: join(outDir, "index.html"), sandbox: join(outDir, "sandbox.html") };
  writeFileSync(files.index, index);
  writeFileSync(files.sandbox, sandboxHtml);
  return files;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const args = process.argv.slice(2);
  const option = (name) => {
    const at = args.indexOf(name);
    return at >= 0 ? args[at + 1] : undefined;
  };
  const outDir = option("--out");
  if (outDir === undefined) {
    console.error("Usage: node scripts/build-reference-host.mjs --out DIR [--sandbox-url URL]");
    process.exit(2);
  }
  const files = await buildReferenceHost({ outDir, sandboxUrl: option("--sandbox-url") });
  console.log(`${files.index}\n${files.sandbox}`);
}
