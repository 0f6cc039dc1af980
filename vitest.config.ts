import { defineConfig } from "vitest/config";

/**
 * Test files that run the built package (dist/): the bin as a child process, or modules a child
 * process imports. Only their project builds dist/ first (test/setup/build-dist.ts); a test that
 * needs dist/ belongs here, or it would run stale code.
 */
const BUILT = [
  "test/analysis/cli.test.ts",
  "test/ledger/file-lock.test.ts",
  "test/ledger/ledger.test.ts",
  "test/sandbox/cli.test.ts",
  "test/server/stdio-bin.test.ts",
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Forked workers keep native zlib/undici state apart from vitest's own process.
    pool: "forks",
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: BUILT,
          isolate: false,
        },
      },
      {
        extends: true,
        test: { name: "built", include: BUILT, globalSetup: ["test/setup/build-dist.ts"] },
      },
    ],
  },
});
