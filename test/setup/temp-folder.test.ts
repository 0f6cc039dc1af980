import { execFile } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it, vi } from "vitest";
import { childRunEnv, startRunFolder } from "./temp-folder.js";

/**
 * The run's temp-folder check, run here as a nested run inside this worker (the real one runs in
 * vitest's main process): the folder it hands out, to children too, and its verdict.
 */

const run = promisify(execFile);
const exitCodeBefore = process.exitCode;

afterEach(() => {
  process.exitCode = exitCodeBefore;
  vi.restoreAllMocks();
});

describe("the test run's temp folder", () => {
  it("is a fresh folder for this process and its children, and a run that leaves anything fails, naming it", async () => {
    const system = tmpdir();
    const written: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    // A state of its own: the real run's, on globalThis, is not this nested run's business.
    const teardown = startRunFolder({});
    const folder = tmpdir();
    try {
      expect(folder).not.toBe(system);
      expect(dirname(folder)).toBe(system);
      const inherited = await run(process.execPath, ["-p", "require('node:os').tmpdir()"]);
      expect(inherited.stdout.trim()).toBe(folder);
      // A child started with an environment of its own gets it through childRunEnv.
      const own = await run(process.execPath, ["-p", "require('node:os').tmpdir()"], {
        env: { PATH: process.env.PATH, ...childRunEnv() },
      });
      expect(own.stdout.trim()).toBe(folder);
      writeFileSync(join(folder, "query-outside-1.csv"), "x");
      mkdirSync(join(folder, "crm-sandbox-abc"));
    } finally {
      teardown();
    }
    expect(process.exitCode).toBe(1);
    const report = written.join("");
    expect(report).toContain("the run left 2 entries in the system temp folder");
    expect(report).toContain("  crm-sandbox-abc/\n  query-outside-1.csv\n");
    expect(existsSync(folder)).toBe(false);
    expect(tmpdir()).toBe(system);
  });

  it("a clean run passes and its folder is removed", () => {
    const system = tmpdir();
    const teardown = startRunFolder({});
    const folder = tmpdir();
    teardown();
    expect(process.exitCode).toBe(exitCodeBefore);
    expect(existsSync(folder)).toBe(false);
    expect(tmpdir()).toBe(system);
  });
});
