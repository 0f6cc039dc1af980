import { readFileSync } from "node:fs";

/**
 * The package's version, read from its package.json (src/ and dist/ both sit one level below the
 * package root), so `--version`, the User-Agent and the MCP server info never drift apart.
 */
export const PACKAGE_VERSION = readPackageVersion();

function readPackageVersion(): string {
  try {
    const pkg: unknown = JSON.parse(
      readFileSync(new URL("../package.json", import.meta.url), "utf8"),
    );
    const version = (pkg as { version?: unknown }).version;
    return typeof version === "string" ? version : "0.0.0";
  } catch {
    return "0.0.0";
  }
}
