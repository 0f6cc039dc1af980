import { chmodSync, lstatSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processAlive } from "../../src/file-io/process-alive.js";

/**
 * Global setup of every test project: the test processes, and the child processes they start,
 * get a temporary folder of this run's own as the system's (TMPDIR, and TMP and TEMP, which
 * Windows reads), and the run fails when anything is left in it at the end, listed by name: each
 * test removes what it makes, also when it fails. A test that starts a child process with an
 * environment of its own passes these variables on (see childRunEnv).
 *
 * Vitest runs a root config's global setup once per project, all in this process: the first
 * call makes the folder, the last teardown checks it.
 */

const VARIABLES = ["TMPDIR", "TMP", "TEMP"] as const;
/**
 * tsc (run by the build, `npm pack` and `npm run bundle`) keeps Node's compile cache in the temp
 * folder unless told not to; no process of a test run needs one.
 */
const NO_COMPILE_CACHE = "NODE_DISABLE_COMPILE_CACHE";
const PREFIX = "crm-test-run-";

interface RunFolder {
  path: string;
  users: number;
  before: Record<string, string | undefined>;
}

type RunState = { crmTestTemp?: RunFolder };

export default function setup(): () => void {
  return startRunFolder(globalThis as RunState);
}

/** The check itself, with the state it keeps across projects passed in (its test passes its own). */
export function startRunFolder(state: RunState): () => void {
  let run = state.crmTestTemp;
  if (run === undefined) {
    const system = tmpdir();
    removeFoldersOfEndedRuns(system);
    const path = mkdtempSync(join(system, `${PREFIX}${process.pid}-`));
    // Like the system's folder: a child process running as another user (the PostgreSQL tests
    // run initdb as `postgres`) reaches its own folder in it.
    chmodSync(path, 0o1777);
    const settings: Record<string, string> = { [NO_COMPILE_CACHE]: "1" };
    for (const v of VARIABLES) settings[v] = path;
    run = {
      path,
      users: 0,
      before: Object.fromEntries(Object.keys(settings).map((v) => [v, process.env[v]])),
    };
    Object.assign(process.env, settings);
    state.crmTestTemp = run;
  }
  run.users += 1;
  const current = run;
  return () => {
    current.users -= 1;
    if (current.users > 0) return;
    state.crmTestTemp = undefined;
    for (const [v, value] of Object.entries(current.before)) {
      if (value === undefined) delete process.env[v];
      else process.env[v] = value;
    }
    const left = readdirSync(current.path)
      .sort()
      .map((name) => `${name}${kindOf(join(current.path, name))}`);
    rmSync(current.path, { recursive: true, force: true });
    if (left.length === 0) return;
    process.stderr.write(
      `\n[test setup] FAIL: the run left ${left.length} entr${left.length === 1 ? "y" : "ies"} in the system temp folder (${current.path}, now removed):\n${left.map((entry) => `  ${entry}`).join("\n")}\nEach test must remove what it makes (afterEach/afterAll or finally, also when it fails).\n\n`,
    );
    process.exitCode = 1;
  };
}

/** "/" for a folder: what kind of thing was left helps to find the test that left it. */
function kindOf(path: string): string {
  try {
    return lstatSync(path).isDirectory() ? "/" : "";
  } catch {
    return "";
  }
}

/** A run stopped before its teardown (Ctrl-C, a killed CI job) leaves its folder: removed here. */
function removeFoldersOfEndedRuns(system: string): void {
  for (const name of readdirSync(system)) {
    if (!name.startsWith(PREFIX)) continue;
    const pid = Number(name.slice(PREFIX.length).split("-")[0]);
    if (pid === process.pid || processAlive(pid)) continue;
    rmSync(join(system, name), { recursive: true, force: true });
  }
}

/**
 * What `faketime` sets to move a process's clock: a run under it (CI's second run) must move its
 * children's clocks too, or a token the test signs is "issued in the future" to the server it
 * starts.
 */
const CLOCK_VARIABLES = ["LD_PRELOAD", "FAKETIME", "FAKETIME_SHARED"] as const;

/**
 * The variables a child process started with an environment of its own (not `process.env`) must
 * share with this run: its temporary folder, without which it would write into the system's
 * folder unchecked, and its clock.
 */
export function childRunEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const v of [...VARIABLES, NO_COMPILE_CACHE, ...CLOCK_VARIABLES]) {
    const value = process.env[v];
    if (value !== undefined) env[v] = value;
  }
  return env;
}
