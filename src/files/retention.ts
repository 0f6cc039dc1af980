import { lstat, readdir, unlink } from "node:fs/promises";
import { join } from "node:path";
import { log } from "../log.js";

/** CRM_RETENTION_DAYS and CRM_RETENTION_MB, read; 0 turns a limit off. */
export interface RetentionPolicy {
  maxAgeDays: number;
  maxBytes: number;
}

export type RemovalReason = "age" | "size";

export interface RemovedFile {
  path: string;
  bytes: number;
  reason: RemovalReason;
}

export interface SweepResult {
  removed: RemovedFile[];
  /** Files left in the folder, and their bytes. */
  keptFiles: number;
  keptBytes: number;
  /** Files that the limits would have removed but that were in use or just downloaded. */
  spared: number;
}

export interface SweepOptions {
  /** Epoch ms; the files' mtimes are compared with it (the local clock, not the service's). */
  now: number;
  /** Whether this process is reading the file (see in-use.ts). */
  inUse: (path: string) => boolean;
}

/**
 * A file downloaded this recently is never removed, even over the size limit: the assistant has
 * just been told its path and is likely to read it next (a summary or a query).
 */
export const RECENT_MS = 60 * 60 * 1000;
const DAY_MS = 24 * 3600 * 1000;

interface Candidate {
  path: string;
  bytes: number;
  mtimeMs: number;
}

/**
 * Removes the export files of `folder` that are older than the age limit, then, oldest first,
 * those that keep the folder over the size limit; a file in use or downloaded within RECENT_MS is
 * kept whatever the limits say. Dot files are left alone: they are downloads in progress, whose
 * own code cleans them up (see api/download.ts). Symbolic links and folders are not touched.
 */
export async function sweepExportFiles(
  folder: string,
  policy: RetentionPolicy,
  options: SweepOptions,
): Promise<SweepResult> {
  const files = await listFiles(folder);
  files.sort((a, b) => a.mtimeMs - b.mtimeMs || a.path.localeCompare(b.path));
  const spare = (file: Candidate) =>
    options.inUse(file.path) || options.now - file.mtimeMs < RECENT_MS;

  const removed: RemovedFile[] = [];
  const spared = new Set<string>();
  const remove = async (file: Candidate, reason: RemovalReason): Promise<boolean> => {
    if (spare(file)) {
      spared.add(file.path);
      return false;
    }
    try {
      await unlink(file.path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Gone already (another server process swept it): it is no longer taking room either.
      if (code !== "ENOENT") {
        // Windows refuses to remove a file another process holds open: keep it for next time.
        log.warn("could not remove an expired export file", { path: file.path, code });
        return false;
      }
    }
    removed.push({ path: file.path, bytes: file.bytes, reason });
    return true;
  };

  let left: Candidate[] = [];
  const maxAgeMs = policy.maxAgeDays * DAY_MS;
  for (const file of files) {
    const expired = policy.maxAgeDays > 0 && options.now - file.mtimeMs > maxAgeMs;
    if (!(expired && (await remove(file, "age")))) left.push(file);
  }
  let total = left.reduce((sum, f) => sum + f.bytes, 0);
  if (policy.maxBytes > 0 && total > policy.maxBytes) {
    const kept: Candidate[] = [];
    for (const file of left) {
      if (total > policy.maxBytes && (await remove(file, "size"))) total -= file.bytes;
      else kept.push(file);
    }
    left = kept;
  }
  return { removed, keptFiles: left.length, keptBytes: total, spared: spared.size };
}

async function listFiles(folder: string): Promise<Candidate[]> {
  let names: string[];
  try {
    names = await readdir(folder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const files: Candidate[] = [];
  for (const name of names) {
    if (name.startsWith(".")) continue;
    const path = join(folder, name);
    const info = await lstat(path).catch(() => undefined);
    if (info?.isFile() !== true) continue;
    files.push({ path, bytes: info.size, mtimeMs: info.mtimeMs });
  }
  return files;
}

/** Total size and count of the export files of a folder (for doctor). */
export async function exportFilesUsage(folder: string): Promise<{ files: number; bytes: number }> {
  const files = await listFiles(folder);
  return { files: files.length, bytes: files.reduce((sum, f) => sum + f.bytes, 0) };
}
