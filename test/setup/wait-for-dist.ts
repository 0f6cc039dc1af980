import { readFile } from "node:fs/promises";
import { vi } from "vitest";
import { BUILD_STATUS_FILE } from "./build-status.js";

/**
 * Setup file of the tests that run the built package: waits until the build started by
 * build-dist.ts has ended, and fails the file loudly when it failed or never ended.
 */
const LIMIT_MS = 10 * 60_000;
const text = await vi.waitFor(
  async () => {
    const found = await readFile(BUILD_STATUS_FILE, "utf8").catch(() => undefined);
    if (found === undefined) {
      throw new Error(`npm run build had not ended after ${LIMIT_MS / 60_000} minutes`);
    }
    return found;
  },
  { timeout: LIMIT_MS, interval: 200 },
);
const status = JSON.parse(text) as { ok: boolean; code: number | null; output: string };
if (!status.ok) throw new Error(`npm run build failed (exit ${status.code}):\n${status.output}`);
