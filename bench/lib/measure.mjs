import { spawnSync } from "node:child_process";
import { stat } from "node:fs/promises";
import { loadavg } from "node:os";

/**
 * What the benchmark scripts share: each measurement runs in a child process of the script
 * itself (its time and peak RSS its own), the median of runs, and the load average printed
 * beside every figure.
 */

/** Runs `script` again with `args` (and `env`), and parses the one JSON line it prints. */
export function runChild(script, args, { maxBuffer = 1 << 20, env = process.env } = {}) {
  const run = spawnSync(process.execPath, [script, ...args], { encoding: "utf8", maxBuffer, env });
  if (run.status !== 0) throw new Error(`${args[0]} failed (exit ${run.status}): ${run.stderr}`);
  return JSON.parse(run.stdout);
}

export function median(values) {
  const v = [...values].sort((a, b) => a - b);
  const mid = Math.floor(v.length / 2);
  return v.length % 2 === 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

/** The load average (1, 5 and 15 minutes), as printed with the figures. */
export function load() {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
}

export function exists(path) {
  return stat(path).then(
    () => true,
    () => false,
  );
}
