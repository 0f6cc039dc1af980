import { vi } from "vitest";

/**
 * Resolves as soon as `check` holds, checking it again every few milliseconds; fails naming
 * `what` when it still does not hold after `timeoutMs`. A test waits for the event itself this
 * way, however slow the machine, instead of sleeping a fixed time and hoping it happened.
 */
export async function waitUntil(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  await vi.waitFor(
    async () => {
      if (!(await check())) throw new Error(`Still waiting for ${what} after ${timeoutMs} ms`);
    },
    { timeout: timeoutMs, interval: 20 },
  );
}
