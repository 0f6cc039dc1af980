import { join } from "node:path";
import type { Config } from "../config.js";

/**
 * The folder this configuration's ledger and downloaded files live in. Sandbox mode keeps its
 * synthetic jobs and files under `sandbox/` of CRM_DATA_DIR, so they never sit beside (or get
 * reused, listed or swept as) real exports; the embedded sandbox's own state belongs there too.
 */
export function dataFolderInUse(config: Pick<Config, "mode" | "dataDir">): string {
  return config.mode === "sandbox" ? join(config.dataDir, "sandbox") : config.dataDir;
}

/** Where downloaded export files are written, inside a data folder. */
export function exportsFolder(dataFolder: string): string {
  return join(dataFolder, "exports");
}

/**
 * The embedded sandbox's own state (its export jobs and their files, as the service keeps them),
 * inside sandbox mode's part of the data folder and apart from the ledger and downloads.
 */
export function sandboxServiceFolder(config: Pick<Config, "dataDir">): string {
  return join(config.dataDir, "sandbox", "service");
}
