import { readdir, rm, rmdir, unlink } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { isOrphanTempName } from "../file-io/orphan-files.js";
import { log } from "../log.js";
import { type HistoryCatalogue, partitionFiles } from "./catalogue.js";
import { EVENTS_DATASET, MESSAGES_DATASET, SCENARIO_DATASET, stagingRoot } from "./layout.js";

/**
 * What a process killed mid-way leaves behind, removed while the history's lock is held (so no
 * commit is under way): staging folders whose owner process is gone, and files in the partition
 * folders that the catalogue does not name (moved into place by a commit that never happened,
 * or replaced by one that did). Readers read only the files the catalogue names, so removing
 * these changes no answer. Folders left empty go too.
 */
export async function sweepHistory(
  folder: string,
  catalogue: HistoryCatalogue,
): Promise<{ files: number; staging: number }> {
  let staging = 0;
  const root = stagingRoot(folder);
  for (const name of await readdir(root).catch(() => [] as string[])) {
    if (!isOrphanTempName(name)) continue;
    await rm(join(root, name), { recursive: true, force: true });
    staging += 1;
  }
  const named = new Set(catalogue.partitions.flatMap(partitionFiles));
  let files = 0;
  for (const dataset of [EVENTS_DATASET, MESSAGES_DATASET, SCENARIO_DATASET]) {
    const top = join(folder, dataset);
    const entries = await readdir(top, { recursive: true, withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (!entry.isFile()) continue;
      const path = join(entry.parentPath, entry.name);
      if (named.has(relative(folder, path).split(sep).join("/"))) continue;
      try {
        await unlink(path);
        files += 1;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
    }
    await removeEmptyFolders(top, false);
  }
  if (files + staging > 0)
    log.info("history: removed files no catalogue names", { files, staging });
  return { files, staging };
}

/** Removes the empty folders under `dir` (and `dir` itself when `self`); true when it went. */
async function removeEmptyFolders(dir: string, self: boolean): Promise<boolean> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => undefined);
  if (entries === undefined) return false;
  let left = entries.length;
  for (const entry of entries) {
    if (entry.isDirectory() && (await removeEmptyFolders(join(dir, entry.name), true))) left -= 1;
  }
  if (!self || left > 0) return false;
  return rmdir(dir).then(
    () => true,
    () => false,
  );
}
