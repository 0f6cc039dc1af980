import { mkdir, open, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";
import { ownedTempPath } from "./orphan-files.js";

/**
 * Replaces `path` with `text` so that a crash (even kill -9) leaves either the old or the new
 * content, never a mix: write a temp file beside it, fsync it, rename over, then fsync the folder
 * so the rename itself is durable.
 */
export async function writeFileAtomic(path: string, text: string): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
  const temp = ownedTempPath(path, "tmp");
  try {
    const handle = await open(temp, "w", 0o600);
    try {
      await handle.writeFile(text, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  await syncDirectory(dir);
}

async function syncDirectory(dir: string): Promise<void> {
  // Directories cannot be opened for fsync on Windows; durability there rests on rename alone.
  if (process.platform === "win32") return;
  try {
    const handle = await open(dir, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Some file systems refuse fsync on directories; the rename is still atomic.
  }
}
