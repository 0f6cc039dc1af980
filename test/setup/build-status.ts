import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Written by build-dist.ts when `npm run build` ends: { ok, code, seconds, output }. */
export const BUILD_STATUS_FILE = join(
  ROOT,
  "node_modules",
  ".cache",
  "crm-insights-mcp",
  "dist-build.json",
);
