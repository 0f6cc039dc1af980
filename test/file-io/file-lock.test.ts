import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, type FSWatcher, watch } from "node:fs";
import { mkdtemp, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { LockTimeoutError, withFileLock } from "../../src/file-io/file-lock.js";
import { JobLedger, ledgerScope } from "../../src/ledger/ledger.js";

/** The built code, for child processes (npm test builds first; Node 20 cannot run TypeScript). */
const builtLedger = new URL("../../dist/ledger/ledger.js", import.meta.url);
const builtLock = new URL("../../dist/file-io/file-lock.js", import.meta.url);
const DAY = 24 * 3600 * 1000;
/** The ledgers' own clock, one fixed instant in every process: only the lock is under test. */
const LEDGER_NOW = Date.parse("2026-11-22T00:00:00Z");

let dir: string;
let attempts: Attempts;
/** Folder watchers of the running test, closed after it whatever its outcome. */
const watchers: FSWatcher[] = [];
const children: ChildProcess[] = [];

interface Attempts {
  /** Resolves once this process has tried to take a lock in the folder `n` times in all. */
  reach(n: number): Promise<void>;
  count(): number;
}

/**
 * Counts this process's attempts to take a lock in `folder` as they happen: each attempt first
 * writes a temp file of its own (`<lock>.<host>-<pid>.<random>.tmp`) to link into place. An
 * attempt seen means the one before it has judged the lock and gone back to waiting, so a test
 * can tell how many times a waiter has looked, whatever the machine's speed.
 */
function watchAttempts(folder: string): Attempts {
  const names = new Set<string>();
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const watcher = watch(folder, (_event, name) => {
    if (name === null || !name.includes(`-${process.pid}.`) || !name.endsWith(".tmp")) return;
    names.add(name);
    for (const waiter of waiters.filter((w) => names.size >= w.n)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  });
  watchers.push(watcher);
  return {
    reach: (n) =>
      names.size >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve })),
    count: () => names.size,
  };
}

/** Resolves when `path` is rewritten by another process (the holder renewing its lease). */
function rewritten(path: string, before: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const watcher = watch(dirname(path), () => {
      readFile(path, "utf8").then((text) => {
        if (text === before) return;
        watcher.close();
        resolve();
      }, reject);
    });
    watchers.push(watcher);
  });
}
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "file-lock-"));
  for (const built of [builtLedger, builtLock]) {
    if (!existsSync(built)) throw new Error(`${built.pathname} missing: run npm run build`);
  }
  attempts = watchAttempts(dir);
});
afterEach(async () => {
  for (const watcher of watchers.splice(0)) watcher.close();
  vi.restoreAllMocks();
  for (const child of children.splice(0)) child.kill("SIGKILL");
  await rm(dir, { recursive: true, force: true });
});

/** Moves this process's wall clock (Date.now) by `ms`, as an NTP step or faketime would. */
function shiftClock(ms: number): void {
  const real = Date.now.bind(Date);
  vi.spyOn(Date, "now").mockImplementation(() => real() + ms);
}

/** Runs `body` (an ES module body) in a child whose Date.now is `shiftMs` off; resolves on "ready". */
function child(body: string, shiftMs: number): Promise<ChildProcess> {
  const script = `
    const realNow = Date.now.bind(Date);
    Date.now = () => realNow() + ${shiftMs};
    ${body}`;
  const proc = spawn(process.execPath, ["--input-type=module", "-e", script], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  children.push(proc);
  return new Promise((resolve, reject) => {
    proc.stdout?.once("data", () => resolve(proc));
    proc.once("exit", (code) => reject(new Error(`child exited early with ${code}`)));
  });
}

/** A child that takes the lock of `path` and holds it until told to let go on stdin ("released"). */
function holdLock(path: string, shiftMs: number): Promise<ChildProcess> {
  return child(
    `const { withFileLock } = await import(${JSON.stringify(builtLock.href)});
     await withFileLock(${JSON.stringify(path)}, async () => {
       process.stdout.write("ready\\n");
       await new Promise((r) => process.stdin.once("data", r));
     });
     process.stdout.write("released\\n");`,
    shiftMs,
  );
}

describe("withFileLock", () => {
  it("waits for a live owner even when the lock's mtime looks hours old to a shifted clock", async () => {
    const path = join(dir, "ledger.json");
    const holder = await holdLock(path, -400 * DAY);
    // As after a clock step: the file system's time and ours disagree by far more than a lease.
    const old = new Date(Date.now() - 3600_000);
    await utimes(`${path}.lock`, old, old);
    shiftClock(400 * DAY);
    let entered = false;
    const waiting = withFileLock(path, async () => {
      entered = true;
    });
    // Twenty looks at the lock, each judging its owner alive (or the caller got in: wrongly).
    await Promise.race([attempts.reach(20), waiting]);
    expect(entered).toBe(false);
    const released = new Promise<void>((resolve) => holder.stdout?.once("data", () => resolve()));
    holder.stdin?.write("go\n");
    await released;
    await waiting;
    expect(entered).toBe(true);
  });

  it("lets one caller of this process in at a time, however many wait (none judges another's lock leaked)", async () => {
    const path = join(dir, "ledger.json");
    let inside = 0;
    let most = 0;
    let entries = 0;
    await Promise.all(
      Array.from({ length: 200 }, () =>
        withFileLock(path, async () => {
          inside += 1;
          entries += 1;
          most = Math.max(most, inside);
          await new Promise((r) => setImmediate(r));
          inside -= 1;
        }),
      ),
    );
    expect(entries).toBe(200);
    expect(most).toBe(1);
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it("gives up on a lock another live process keeps, every caller in line together", async () => {
    const path = join(dir, "ledger.json");
    const holder = await holdLock(path, 0);
    vi.useFakeTimers({ toFake: ["performance"] });
    try {
      const outcomes = Array.from({ length: 3 }, () =>
        withFileLock(path, async () => "entered").catch((error: unknown) => error),
      );
      // The first caller in line has looked at the lock once (its second attempt is under way).
      await attempts.reach(2);
      // 18 s in all, past the give-up time of all three (15 s) but short of twice it, with the
      // holder renewing its lease (every 2 s of its real time) in between, so the lock is never
      // judged abandoned (10 s unchanged).
      const before = await readFile(`${path}.lock`, "utf8");
      const renewed = rewritten(`${path}.lock`, before);
      vi.advanceTimersByTime(9000);
      await renewed;
      // The caller has looked at the renewed lock: attempts started after it was seen renewed.
      await attempts.reach(attempts.count() + 3);
      vi.advanceTimersByTime(9000);
      const settled = await Promise.all(outcomes);
      expect(settled).toHaveLength(3);
      for (const outcome of settled) {
        expect(outcome).toBeInstanceOf(LockTimeoutError);
      }
    } finally {
      vi.useRealTimers();
      holder.stdin?.write("go\n");
    }
  });

  it("takes over at once a lock whose owner process is gone", async () => {
    const path = join(dir, "ledger.json");
    const gone = spawn(process.execPath, ["-e", ""]);
    const pid = gone.pid;
    await new Promise((r) => gone.once("exit", r));
    await writeFile(
      `${path}.lock`,
      `${JSON.stringify({ pid, host: hostname(), token: "dead0wner", renewal: 0 })}\n`,
    );
    // A clock moved back must not make a dead owner's lock look fresh either.
    const future = new Date(Date.now() + 3600_000);
    await utimes(`${path}.lock`, future, future);
    shiftClock(-400 * DAY);
    const started = performance.now();
    await withFileLock(path, async () => undefined);
    // Far below the lease (10 s) an unknown owner would be given.
    expect(performance.now() - started).toBeLessThan(3000);
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it("takes over a lock of another host only once its lease stopped being renewed", async () => {
    const path = join(dir, "ledger.json");
    await writeFile(
      `${path}.lock`,
      `${JSON.stringify({ pid: 1, host: "elsewhere.invalid", token: "t", renewal: 0 })}\n`,
    );
    vi.useFakeTimers({ toFake: ["performance"] });
    try {
      let entered = false;
      const waiting = withFileLock(path, async () => {
        entered = true;
      });
      // Looked at twice: the lease's start is noted, and the lock is not taken over yet.
      await Promise.race([attempts.reach(3), waiting]);
      expect(entered).toBe(false);
      vi.advanceTimersByTime(11_000);
      await waiting;
      expect(entered).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("reserveCreate across processes", () => {
  it("never passes the budget with parallel callers in two ledger instances and a child process, clocks shifted", async () => {
    const budget = { count: 5, windowSeconds: 600 };
    const scope = ledgerScope("sandbox", undefined);
    const grantedBy = await child(
      `const { JobLedger } = await import(${JSON.stringify(builtLedger.href)});
       const ledger = new JobLedger(${JSON.stringify(dir)}, ${JSON.stringify(budget)}, () => ${LEDGER_NOW}, ${JSON.stringify(scope)});
       process.stdout.write("ready\\n");
       await new Promise((r) => process.stdin.once("data", r));
       const results = await Promise.all(Array.from({ length: 8 }, () => ledger.reserveCreate()));
       process.stdout.write(JSON.stringify(results.filter((r) => r.reserved).length) + "\\n");`,
      -40 * DAY,
    );
    shiftClock(400 * DAY);
    const one = new JobLedger(dir, budget, () => LEDGER_NOW, scope);
    const two = new JobLedger(dir, budget, () => LEDGER_NOW, scope);
    const childCount = new Promise<number>((resolve) =>
      grantedBy.stdout?.once("data", (data: Buffer) => resolve(Number(data.toString()))),
    );
    grantedBy.stdin?.write("go\n");
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? one : two).reserveCreate()),
    );
    const granted = results.filter((r) => r.reserved).length + (await childCount);
    expect(granted).toBe(budget.count);
    const file = JSON.parse(await readFile(one.path, "utf8")) as { create_calls: number[] };
    expect(file.create_calls).toHaveLength(budget.count);
  });
});
