import { spawn } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { BUILD_STATUS_FILE, ROOT } from "./build-status.js";

/**
 * Global setup of the tests that run the built package: starts `npm run build` and returns at
 * once, so the other tests run while tsc works; each of these test files waits for the build's
 * status (test/setup/wait-for-dist.ts). Vitest calls this only when one of them is queued.
 */
export default function setup(): () => Promise<void> {
  rmSync(BUILD_STATUS_FILE, { force: true });
  mkdirSync(dirname(BUILD_STATUS_FILE), { recursive: true });
  const started = Date.now();
  const child = spawn("npm", ["run", "build", "--silent"], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-20_000);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  const finished = new Promise<void>((resolve) => {
    const settle = (code: number | null, error?: Error) => {
      const seconds = Number(((Date.now() - started) / 1000).toFixed(1));
      writeFileSync(
        BUILD_STATUS_FILE,
        JSON.stringify({ ok: code === 0, code, seconds, output: error?.message ?? output }),
      );
      process.stderr.write(`[test setup] npm run build: exit ${code} after ${seconds} s\n`);
      resolve();
    };
    child.once("error", (error) => settle(null, error));
    child.once("close", (code) => settle(code));
  });
  // Teardown: never leave the build running behind the test run.
  return () => finished;
}
