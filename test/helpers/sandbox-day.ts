import type { RunningSandbox } from "../../src/sandbox/types.js";

/**
 * A date `daysBack` before the sandbox's start (it runs on the real clock in these tests), in
 * Asia/Seoul: counted from the sandbox's clock rather than read again now, so a run that crosses
 * midnight in Seoul still asks for days of the sandbox's data.
 */
export function sandboxDay(sandbox: RunningSandbox, daysBack: number): string {
  return new Date(sandbox.world.now + 9 * 3600_000 - daysBack * 86_400_000)
    .toISOString()
    .slice(0, 10);
}
