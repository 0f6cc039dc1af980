// The packages the built bin (dist/cli.js, its chunks and the summary's worker) loads from
// node_modules at run time: those esbuild leaves out of the bundle. DuckDB's binding is a native
// addon, found beside its JavaScript, so it cannot be bundled; everything else the bin needs is
// inside dist/. scripts/build-bin.mjs fails when the bundle would load any other package, and
// scripts/bundle.mjs puts exactly these and their own dependencies into an MCP Bundle.
import { builtinModules } from "node:module";

export const BIN_EXTERNAL_PACKAGES = ["@duckdb/node-api"];

/**
 * Packages the bundled code names but never loads, so no bundle carries them: pg requires
 * pg-native only when `pg.native` is read, which nothing here does.
 */
export const NEVER_LOADED_PACKAGES = ["pg-native"];

/** The package an import specifier names (`@scope/name` or `name`), or undefined for Node's own. */
export function packageOf(specifier) {
  if (specifier.startsWith("node:") || builtinModules.includes(specifier.split("/")[0])) {
    return undefined;
  }
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}
