import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/**
 * Builds dist/ once before the tests that run the built package (the bin as a child process, or
 * code a child process imports: Node 20 cannot run our TypeScript itself). Vitest calls this only
 * when one of those tests is queued, so a run of other test files never pays for the build.
 */
export default function setup(): void {
  const started = Date.now();
  execFileSync("npm", ["run", "build", "--silent"], {
    cwd: fileURLToPath(new URL("../..", import.meta.url)),
    stdio: ["ignore", "ignore", "inherit"],
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  process.stderr.write(`[test setup] dist/ built in ${seconds} s\n`);
}
