import { randomBytes } from "node:crypto";
import { link, mkdir, readFile, rename, unlink, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { dirname } from "node:path";
import { ownedTempPath } from "./orphan-files.js";
import { processAlive } from "./process-alive.js";

/**
 * A cross-process lock beside a file: `<path>.lock`, holding its owner's PID, host name and a
 * random token. No clock is compared with another: wall clocks jump (NTP steps, suspend and
 * resume, a clock moved for a test) and a data folder on a network file system stamps mtimes
 * with the server's clock, so "this lock's mtime is old" proves nothing. Instead:
 * - on the same host, an owner whose PID no longer exists (killed with SIGKILL) has left the
 *   lock behind, which is taken over at once;
 * - otherwise the owner renews a lease by rewriting the lock (a counter changes) while it
 *   holds it, and an observer takes the lock over only after seeing the same content unchanged
 *   for LEASE_MS of its own monotonic time (which also covers a PID reused by another program).
 * The lock is created by link(2) of a complete file, so nobody ever reads a half-written lock.
 */

const LEASE_MS = 10_000;
const RENEW_MS = 2_000;
const WAIT_MS = 15;
const GIVE_UP_MS = 15_000;

export class LockTimeoutError extends Error {
  override name = "LockTimeoutError";
}

interface LockOwner {
  pid: number;
  host: string;
  token: string;
  renewal: number;
}

/** Tokens of locks this process holds right now; a lock of ours not in here was leaked. */
const held = new Set<string>();
/** Per lock path: the content first seen and when (monotonic), to judge an expired lease. */
const seen = new Map<string, { text: string; since: number }>();

/**
 * Per lock: the last caller of this process in line. Callers of one process take turns here
 * before they contend for the file, so the file lock is contended only between processes: a
 * caller of this process reading the lock of another one that is just releasing it (or has just
 * linked it) would see a lock of this PID that is not held, judge it leaked, and move aside what
 * may by then be a third caller's fresh lock.
 */
const inLine = new Map<string, Promise<unknown>>();

export async function withFileLock<T>(path: string, work: () => Promise<T>): Promise<T> {
  const lock = `${path}.lock`;
  // From the call, not from the turn: callers in line behind a lock another process keeps give
  // up together, not each GIVE_UP_MS after the one before it.
  const started = performance.now();
  const before = inLine.get(lock) ?? Promise.resolve();
  const turn = before.catch(() => undefined).then(() => withLockFile(lock, path, started, work));
  const settled = turn.catch(() => undefined);
  inLine.set(lock, settled);
  try {
    return await turn;
  } finally {
    if (inLine.get(lock) === settled) inLine.delete(lock);
  }
}

async function withLockFile<T>(
  lock: string,
  path: string,
  started: number,
  work: () => Promise<T>,
): Promise<T> {
  await mkdir(dirname(lock), { recursive: true });
  const owner: LockOwner = {
    pid: process.pid,
    host: hostname(),
    token: randomBytes(12).toString("hex"),
    renewal: 0,
  };
  while (!(await tryCreate(lock, owner))) {
    if (await takeOverIfAbandoned(lock)) continue;
    if (performance.now() - started > GIVE_UP_MS) {
      throw new LockTimeoutError(
        `The export-job ledger ${path} stayed locked by another process for ${GIVE_UP_MS / 1000}s; retry shortly.`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, WAIT_MS + Math.random() * WAIT_MS));
  }
  held.add(owner.token);
  const renewer = setInterval(() => {
    owner.renewal += 1;
    renew(lock, owner).catch(() => undefined);
  }, RENEW_MS);
  renewer.unref();
  try {
    return await work();
  } finally {
    clearInterval(renewer);
    held.delete(owner.token);
    await release(lock, owner.token);
  }
}

function serialize(owner: LockOwner): string {
  return `${JSON.stringify(owner)}\n`;
}

function parse(text: string): LockOwner | undefined {
  // Earlier versions wrote only the PID, on this host.
  if (/^\d+\n?$/.test(text)) {
    return { pid: Number(text), host: hostname(), token: "pid-only", renewal: 0 };
  }
  try {
    const value = JSON.parse(text) as Partial<LockOwner>;
    if (
      typeof value.pid === "number" &&
      typeof value.host === "string" &&
      typeof value.token === "string"
    ) {
      return { pid: value.pid, host: value.host, token: value.token, renewal: value.renewal ?? 0 };
    }
  } catch {
    // Not ours (an older format or garbage): only the lease can end it.
  }
  return undefined;
}

function tempName(lock: string): string {
  return ownedTempPath(lock, "tmp");
}

/** Writes the complete lock beside it, then links it into place: fails if a lock exists. */
async function tryCreate(lock: string, owner: LockOwner): Promise<boolean> {
  const temp = tempName(lock);
  await writeFile(temp, serialize(owner), { mode: 0o600 });
  try {
    await link(temp, lock);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}

async function readLock(lock: string): Promise<string | undefined> {
  try {
    return await readFile(lock, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** True when the lock was removed because its owner is gone or its lease ran out. */
async function takeOverIfAbandoned(lock: string): Promise<boolean> {
  const text = await readLock(lock);
  // Gone between the failed link and now: just try again.
  if (text === undefined) return true;
  if (!isAbandoned(lock, text)) return false;
  // Move the lock aside and check it is the one judged: two observers may judge the same lock,
  // and the slower one must not remove the fresh lock the faster one has created since.
  const aside = tempName(lock);
  try {
    await rename(lock, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return true;
    throw error;
  }
  const moved = await readFile(aside, "utf8").catch(() => undefined);
  if (moved !== text) {
    // Someone's live lock: put it back (link fails rather than replace a newer one).
    await link(aside, lock).catch(() => undefined);
  }
  await unlink(aside).catch(() => undefined);
  seen.delete(lock);
  return true;
}

function isAbandoned(lock: string, text: string): boolean {
  const owner = parse(text);
  if (owner !== undefined && owner.host === hostname()) {
    if (owner.pid === process.pid) {
      if (!held.has(owner.token)) return true;
    } else if (!processAlive(owner.pid)) {
      return true;
    }
  }
  const now = performance.now();
  const first = seen.get(lock);
  if (first === undefined || first.text !== text) {
    seen.set(lock, { text, since: now });
    return false;
  }
  return now - first.since > LEASE_MS;
}

async function renew(lock: string, owner: LockOwner): Promise<void> {
  const current = parse((await readLock(lock)) ?? "");
  if (current?.token !== owner.token) return;
  const temp = tempName(lock);
  await writeFile(temp, serialize(owner), { mode: 0o600 });
  await rename(temp, lock).catch(async (error: unknown) => {
    await unlink(temp).catch(() => undefined);
    throw error;
  });
}

async function release(lock: string, token: string): Promise<void> {
  const current = parse((await readLock(lock).catch(() => undefined)) ?? "");
  // A lock taken over from us (we stalled past the lease) is no longer ours to remove.
  if (current?.token === token) await unlink(lock).catch(() => undefined);
}
