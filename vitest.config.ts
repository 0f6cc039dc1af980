import { readdirSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { MissingPrograms } from "./test/setup/missing-programs.js";
import { LongFilesFirst, START_FIRST } from "./test/setup/sequencer.js";

const ROOT = fileURLToPath(new URL(".", import.meta.url));

/**
 * Test files that run the built package (dist/): the bin as a child process, or modules a child
 * process imports. Found by their reference to dist/, or by their import of a test helper that
 * refers to it (test/helpers/serve-http.ts), so a new one cannot be forgotten here. Only their
 * project builds dist/ (test/setup/build-dist.ts), while the others already run.
 */
const TEST_FILES = readdirSync(join(ROOT, "test"), { recursive: true, encoding: "utf8" })
  .filter((f) => f.endsWith(".ts"))
  .map((f) => join("test", f));
const refersToDist = (f: string) => /["'`/]dist\//.test(readFileSync(join(ROOT, f), "utf8"));
const DIST_HELPERS = TEST_FILES.filter((f) => !f.endsWith(".test.ts") && refersToDist(f)).map(
  (f) => `/${f.split("/").at(-1)?.replace(/\.ts$/, ".js")}"`,
);
const BUILT = TEST_FILES.filter(
  (f) =>
    f.endsWith(".test.ts") &&
    (refersToDist(f) ||
      DIST_HELPERS.some((helper) => readFileSync(join(ROOT, f), "utf8").includes(helper))),
).sort();

// A renamed or removed long file would silently lose its early start: fail instead.
for (const file of START_FIRST) readFileSync(join(ROOT, file));

export default defineConfig({
  test: {
    // Sized for a busy machine: a test that takes 10-15 s alone takes two or three times that
    // while another CPU-heavy process (a second test run, a build) shares the two cores. Tests
    // that drive a browser have their own, longer deadline (BROWSER_TEST_TIMEOUT_MS).
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Forked workers keep native zlib/undici state apart from vitest's own process.
    pool: "forks",
    // Most test files spend their time waiting on child processes, loopback HTTP and timers, so
    // one worker more than there are cores keeps the cores busy. Vitest's default (cores - 1)
    // ran every file one after another on the 2-core CI machine: 253 s instead of 121 s.
    maxWorkers: availableParallelism() + 1,
    sequence: { sequencer: LongFilesFirst },
    // Vitest's own report, then one line per test file skipped for want of Chromium, PostgreSQL
    // or a Hangul font (test/helpers/needs.ts), saying what to install.
    reporters: ["default", new MissingPrograms()],
    // Servers under test log at warn (a run prints failures, not hundreds of info lines); a test
    // that wants more sets the level itself, and CRM_LOG_LEVEL=info npm test shows everything.
    env: { CRM_LOG_LEVEL: process.env.CRM_LOG_LEVEL ?? "warn" },
    // A temp folder of the run's own for every test process and its children; the run fails
    // when a test leaves anything in it (test/setup/temp-folder.ts).
    globalSetup: ["test/setup/temp-folder.ts"],
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: BUILT,
          // Files share a worker's module cache instead of one fresh process per file: imports
          // (the SDK, zod, undici) are paid twice instead of once per file. Tests must not leave
          // state behind (restore env, spies and log level), as they already do.
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: "built",
          include: BUILT,
          // The build starts in the background; each file waits for it before its tests.
          globalSetup: ["test/setup/build-dist.ts"],
          setupFiles: ["test/setup/wait-for-dist.ts"],
        },
      },
    ],
  },
});
