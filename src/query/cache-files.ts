import { createHash } from "node:crypto";
import { open, readdir, stat, unlink } from "node:fs/promises";
import { basename, join } from "node:path";
import { isOrphanTempName } from "../file-io/orphan-files.js";
import { log } from "../log.js";

/**
 * The Parquet copies of campaign CSVs that make a second question on a large export fast: one
 * per export file of the data folder's `exports/`, in its `query-cache/`, named after the export
 * and a fingerprint of its content (size, modification time and its first and last 64 KiB), so a
 * changed file is never answered from an old copy. A copy whose export is gone or changed is
 * removed by sweepQueryCache (run with the retention sweep).
 */

const SAMPLE_BYTES = 64 * 1024;
const CACHE_NAME = /^(.+)\.([0-9a-f]{16})\.parquet$/;

export function queryCacheFolder(dataFolder: string): string {
  return join(dataFolder, "query-cache");
}

/** A cheap fingerprint of a file: hashing all of a 700 MB export would cost more than a query. */
export async function fileFingerprint(path: string): Promise<string> {
  const info = await stat(path);
  const hash = createHash("sha256").update(`${info.size}:${info.mtimeMs}:`);
  const handle = await open(path, "r");
  try {
    const buffer = Buffer.alloc(Math.min(SAMPLE_BYTES, info.size));
    await handle.read(buffer, 0, buffer.length, 0);
    hash.update(buffer);
    const tail = Math.max(0, info.size - SAMPLE_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, tail);
    hash.update(buffer.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
  return hash.digest("hex").slice(0, 16);
}

/** Where the Parquet copy of `exportPath` (a file of `exports/`) with this fingerprint lives. */
export function cachePath(dataFolder: string, exportPath: string, fingerprint: string): string {
  return join(queryCacheFolder(dataFolder), `${basename(exportPath)}.${fingerprint}.parquet`);
}

/**
 * Removes the copies whose export no longer exists in `exportsFolder`, or has changed since the
 * copy was made, and the temporary file of a conversion whose process is gone.
 */
export async function sweepQueryCache(
  dataFolder: string,
  exportsFolder: string,
  inUse: (path: string) => boolean,
): Promise<string[]> {
  const folder = queryCacheFolder(dataFolder);
  const names = await readdir(folder).catch(() => [] as string[]);
  const removed: string[] = [];
  for (const name of names) {
    const path = join(folder, name);
    const m = CACHE_NAME.exec(name);
    let keep = false;
    if (m !== null) {
      const source = join(exportsFolder, m[1] as string);
      const current = await fileFingerprint(source).catch(() => undefined);
      keep = current === m[2] || inUse(source);
    } else keep = !isOrphanTempName(name);
    if (keep) continue;
    try {
      await unlink(path);
      removed.push(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOENT") log.warn("could not remove a query cache file", { path, code });
    }
  }
  return removed;
}
