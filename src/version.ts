import { readFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "./package-files.js";

/**
 * The package's version, read from its package.json, so `--version`, the User-Agent and the MCP server info never drift apart.
 */
export const PACKAGE_VERSION = readPackageVersion();

function readPackageVersion(): string {
  try {
    const pkg: unknown = JSON.parse(readFileSync(join(packageRoot(), "package.json"), "utf8"));
    const version = (pkg as { version?: unknown }).version;
    return typeof version === "string" ? version : "0.0.0";
  } catch {
    return "0.0.0";
  }
}
