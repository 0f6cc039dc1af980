import { readdir } from "node:fs/promises";
import { exportsFolder } from "../files/data-folder.js";
import { fileSystemNow } from "../files/fs-clock.js";
import { isFileInUse } from "../files/in-use.js";
import { type RetentionPolicy, type SweepResult, sweepExportFiles } from "../files/retention.js";
import type { ExportBudget } from "../ledger/budget.js";
import { JobLedger } from "../ledger/ledger.js";
import { sweepQueryCache } from "../query/cache-files.js";

export interface RetentionRun {
  /** The data folder in use (see dataFolderInUse); its `exports/` is swept. */
  dataFolder: string;
  policy: RetentionPolicy;
  /**
   * Epoch ms the files' mtimes are judged by; default the file system's own "now" (see
   * fs-clock.ts), as the files' mtimes were stamped by it.
   */
  now?: number;
  /** The ledgers' clock and budget, to open every ledger of the folder the way the server does. */
  ledgerNow: () => number;
  budget: ExportBudget;
  inUse?: (path: string) => boolean;
}

const LEDGER_FILE = /^export-jobs-([0-9a-f]{12})\.json$/;

/**
 * Sweeps the folder's export files and marks the removed ones in every ledger of the folder: one
 * `exports/` holds the files of every application configured on this data folder.
 */
export async function runRetention(run: RetentionRun): Promise<SweepResult> {
  const folder = exportsFolder(run.dataFolder);
  const result = await sweepExportFiles(folder, run.policy, {
    now: run.now ?? (await fileSystemNow(folder)),
    inUse: run.inUse ?? isFileInUse,
  });
  // The Parquet copies of removed (or changed) exports go with them.
  await sweepQueryCache(run.dataFolder, folder, run.inUse ?? isFileInUse);
  if (result.removed.length === 0) return result;
  const names = await readdir(run.dataFolder).catch(() => [] as string[]);
  for (const name of names) {
    const scope = LEDGER_FILE.exec(name)?.[1];
    if (scope === undefined) continue;
    await new JobLedger(run.dataFolder, run.budget, run.ledgerNow, scope).markFilesRemoved(
      result.removed,
    );
  }
  return result;
}
