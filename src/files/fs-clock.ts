import { mkdir, open, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import { ownedTempPath } from "../file-io/orphan-files.js";

/**
 * "Now" as the file system stamps it: the mtime of a file written this instant in `folder`.
 * File ages are judged against this, never against the process clock: the two disagree after a
 * clock step, under a shifted clock (faketime), and on a network share stamped by its server's
 * clock, and a file that looked 400 days old the moment it was downloaded would be deleted.
 */
export async function fileSystemNow(folder: string): Promise<number> {
  await mkdir(folder, { recursive: true });
  const probe = ownedTempPath(join(folder, ".clock"), "tmp");
  const handle = await open(probe, "wx", 0o600);
  try {
    await handle.write("now");
  } finally {
    await handle.close();
  }
  try {
    return (await stat(probe)).mtimeMs;
  } finally {
    await unlink(probe).catch(() => undefined);
  }
}
