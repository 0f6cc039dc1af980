import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Where the package's own files are, for the modules that read one (package.json, the report
 * page, the summary's worker script). A module's URL says nothing fixed about its depth: this
 * code runs from src/ (tests), from dist/ as tsc writes it, and bundled into dist/cli.js or one
 * of its chunks in dist/cli-chunks/ (scripts/build-bin.mjs). The package root is the nearest
 * folder above that holds a package.json (src/ and dist/ have none); the built files are under
 * its dist/, also when the caller runs from src/.
 */

let root: string | undefined;

export function packageRoot(): string {
  root ??= nearestPackageFolder(dirname(fileURLToPath(import.meta.url)));
  return root;
}

/** A file the build writes, e.g. `builtFile("report", "view.html")` for dist/report/view.html. */
export function builtFile(...parts: string[]): string {
  return join(packageRoot(), "dist", ...parts);
}

function nearestPackageFolder(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) throw new Error(`No package.json in ${from} or above it.`);
  }
}
