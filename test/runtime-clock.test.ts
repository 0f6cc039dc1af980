import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { createRuntime } from "../src/runtime.js";

/**
 * An offset-less CRM_SANDBOX_NOW means Asia/Seoul (the sandbox's rule) even on a machine in a
 * western zone, for the runtime's clock before the embedded sandbox has started.
 */

const savedTz = process.env.TZ;
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "runtime-clock-"));
  // Node re-reads TZ when it changes: offset-less dates now parse in Los Angeles time.
  process.env.TZ = "America/Los_Angeles";
});
afterAll(async () => {
  if (savedTz === undefined) delete process.env.TZ;
  else process.env.TZ = savedTz;
  await rm(dir, { recursive: true, force: true });
});

describe("runtime clock in sandbox mode", () => {
  it("reads an offset-less pinned now in Asia/Seoul, whatever the machine's zone", async () => {
    // The machine's zone is really in effect (otherwise this test would prove nothing).
    expect(new Date(Date.UTC(2026, 10, 22, 12)).getHours()).toBe(4);
    const runtime = createRuntime(
      loadConfig({ CRM_DATA_DIR: dir, CRM_SANDBOX_NOW: "2026-11-22T01:00:00" }),
    );
    try {
      expect(runtime.sandbox).toBe(true);
      // 01:00 in Seoul (UTC+9) is 16:00 UTC the day before.
      const seoul = Date.UTC(2026, 10, 21, 16, 0, 0);
      expect(Math.abs(runtime.now() - seoul)).toBeLessThan(60_000);
    } finally {
      await runtime.close();
    }
  });
});
