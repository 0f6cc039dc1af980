import { mkdir, open, readFile, rm, stat } from "node:fs/promises";
import { dirname } from "node:path";

/**
 * A cross-process lock beside a file: `<path>.lock`, created with O_EXCL so only one process
 * holds it. A lock whose owner is gone (killed with SIGKILL mid-write) or that is older than any
 * ledger update could take is removed, so a crash never wedges the ledger.
 */

const STALE_MS = 10_000;
const WAIT_MS = 15;
const GIVE_UP_MS = 5_000;

export class LockTimeoutError extends Error {
  override name = "LockTimeoutError";
}

export async function withFileLock<T>(path: string, work: () => Promise<T>): Promise<T> {
  const lock = `${path}.lock`;
  await mkdir(dirname(lock), { recursive: true });
  const started = Date.now();
  for (;;) {
    try {
      const handle = await open(lock, "wx", 0o600);
      try {
        await handle.writeFile(`${process.pid}\n`, "utf8");
      } finally {
        await handle.close();
      }
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      if (await isStale(lock)) {
        await rm(lock, { force: true });
        continue;
      }
      if (Date.now() - started > GIVE_UP_MS) {
        throw new LockTimeoutError(
          `The export-job ledger ${path} stayed locked by another process for ${GIVE_UP_MS / 1000}s; retry shortly.`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, WAIT_MS + Math.random() * WAIT_MS));
    }
  }
  try {
    return await work();
  } finally {
    await rm(lock, { force: true });
  }
}

async function isStale(lock: string): Promise<boolean> {
  try {
    const [info, text] = await Promise.all([stat(lock), readFile(lock, "utf8")]);
    if (Date.now() - info.mtimeMs > STALE_MS) return true;
    const pid = Number.parseInt(text.trim(), 10);
    // An empty file is a lock being written this instant; only an age makes it stale.
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
    return !processAlive(pid);
  } catch (error) {
    // Gone between the failed open and now: not stale, just retry the open.
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
