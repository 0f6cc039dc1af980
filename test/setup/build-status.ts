import { createHash } from "node:crypto";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * Written by build-dist.ts when `npm run build` ends: { ok, code, seconds, output }. Named by the
 * checkout: checkouts of one repository may share a `node_modules` (a symlink into another
 * worktree), and one run must never read another checkout's build as its own.
 */
export const BUILD_STATUS_FILE = join(
  ROOT,
  "node_modules",
  ".cache",
  "crm-insights-mcp",
  `dist-build-${createHash("sha256").update(ROOT).digest("hex").slice(0, 16)}.json`,
);
