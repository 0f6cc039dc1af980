import { vi } from "vitest";

export interface WaitOptions {
  /**
   * How long the event may take before the test fails; default 30 s, for a machine whose cores
   * are busy with other work (an event that takes milliseconds alone can then take seconds).
   */
  timeoutMs?: number;
  /** How often `check` runs; default 20 ms (longer for a check that asks a server). */
  intervalMs?: number;
}

/**
 * Resolves as soon as `check` holds, checking it again every few milliseconds; fails naming
 * `what` when it still does not hold after the timeout. A test waits for the event itself this
 * way, however slow the machine, instead of sleeping a fixed time and hoping it happened.
 */
export async function waitUntil(
  check: () => boolean | Promise<boolean>,
  what: string,
  { timeoutMs = 30_000, intervalMs = 20 }: WaitOptions = {},
): Promise<void> {
  await vi.waitFor(
    async () => {
      if (!(await check())) throw new Error(`Still waiting for ${what} after ${timeoutMs} ms`);
    },
    { timeout: timeoutMs, interval: intervalMs },
  );
}
