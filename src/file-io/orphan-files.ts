import { createHash, randomBytes } from "node:crypto";
import { readdir, unlink } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { processAlive } from "./process-alive.js";

/**
 * Temporary files we write (download `.part` files, atomic-write `.tmp` files) carry their
 * owner in the name: a tag of the host and the PID. A temporary file whose owner process no
 * longer runs on this host was left by a kill or a crash and can go at once; no clock or mtime
 * is asked (clocks jump, and a `.part` file can be 700 MB that nobody should wait an hour for).
 * Files of another host (a data folder on a network share) are left alone: their owner's
 * liveness cannot be checked from here.
 */

const HOST_TAG = createHash("sha256").update(hostname()).digest("hex").slice(0, 8);

/** `.<host>-<pid>.<random>.part` for downloads, `<name>.<host>-<pid>.<random>.tmp` beside a file. */
const OWNED = /\.([0-9a-f]{8})-(\d+)\.[0-9a-f]+\.(?:part|tmp)$/;
/** Earlier versions: `<name>.<pid>.<random>.tmp` (this host), and `.<random>.part` (no owner). */
const PID_ONLY_TMP = /\.(\d+)\.[0-9a-f]+\.tmp$/;

/** A temporary name beside `base` (a path prefix) owned by this process. */
export function ownedTempPath(base: string, ext: "part" | "tmp"): string {
  return `${base}.${HOST_TAG}-${process.pid}.${randomBytes(8).toString("hex")}.${ext}`;
}

/** True for a temporary file of ours whose owner process is gone from this host. */
export function isOrphanTempName(name: string): boolean {
  const owned = OWNED.exec(name);
  if (owned !== null) {
    return owned[1] === HOST_TAG && isGone(Number(owned[2]));
  }
  const legacy = PID_ONLY_TMP.exec(name);
  return legacy !== null && isGone(Number(legacy[1]));
}

function isGone(pid: number): boolean {
  // Our own files may be in use by another server instance of this process.
  return pid !== process.pid && !processAlive(pid);
}

/**
 * Removes orphaned temporary files in each folder (not recursive); best effort. Returns how
 * many were removed.
 */
export async function sweepOrphanTempFiles(directories: readonly string[]): Promise<number> {
  let removed = 0;
  for (const directory of directories) {
    const names = await readdir(directory).catch(() => [] as string[]);
    for (const name of names) {
      if (!isOrphanTempName(name)) continue;
      try {
        await unlink(join(directory, name));
        removed += 1;
      } catch {
        // Gone already, or not ours to remove: either way nothing to do.
      }
    }
  }
  return removed;
}
