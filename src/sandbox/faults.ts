import { Transform } from "node:stream";
import type { FaultAction, FaultInjector, FaultRule, SandboxOperation } from "./types.js";

const OPERATIONS: readonly SandboxOperation[] = [
  "recommend",
  "create_export_job",
  "get_export_job",
  "campaign_metrics",
  "download",
];

export interface ServerFaults extends FaultInjector {
  /** Counts the request and returns the action of the first matching rule, consuming one use. */
  take(operation: SandboxOperation): FaultAction | undefined;
}

/** Rules apply in injection order; each applies to `times` matching requests (default 1). */
export function createFaultInjector(): ServerFaults {
  const rules: Array<{ operation: SandboxOperation; action: FaultAction; left: number }> = [];
  const counts = Object.fromEntries(OPERATIONS.map((op) => [op, 0])) as Record<
    SandboxOperation,
    number
  >;
  return {
    inject(rule: FaultRule): void {
      const times = rule.times ?? 1;
      if (!Number.isInteger(times) || times < 1)
        throw new Error("times must be a positive integer");
      if (!OPERATIONS.includes(rule.operation)) {
        throw new Error(`Unknown operation "${rule.operation}"`);
      }
      // A rule that could never apply would make a test pass without its fault happening.
      if (rule.action.type === "truncate" && rule.operation !== "download") {
        throw new Error(`A truncate fault applies to downloads only, not to ${rule.operation}`);
      }
      if (rule.action.type === "garble" && rule.operation === "download") {
        throw new Error("A garble fault applies to JSON answers, not to downloads");
      }
      if (rule.action.type === "throttle") {
        if (rule.operation !== "download") {
          throw new Error(`A throttle fault applies to downloads only, not to ${rule.operation}`);
        }
        if (!(rule.action.bytesPerSecond > 0)) throw new Error("bytesPerSecond must be positive");
      }
      rules.push({ operation: rule.operation, action: rule.action, left: times });
    },
    clear(): void {
      rules.length = 0;
    },
    get requestCounts(): Readonly<Record<SandboxOperation, number>> {
      return { ...counts };
    },
    take(operation: SandboxOperation): FaultAction | undefined {
      counts[operation] += 1;
      const index = rules.findIndex((rule) => rule.operation === operation);
      const rule = rules[index];
      if (rule === undefined) return undefined;
      rule.left -= 1;
      if (rule.left <= 0) rules.splice(index, 1);
      return rule.action;
    },
  };
}

/**
 * Passes bytes on at about `bytesPerSecond`, in slices of a tenth of a second, like a slow link:
 * the receiver sees the file arrive gradually rather than after one long pause.
 */
export function throttle(bytesPerSecond: number): Transform {
  const slice = Math.max(1, Math.floor(bytesPerSecond / 10));
  let timer: NodeJS.Timeout | undefined;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      let offset = 0;
      const next = () => {
        timer = undefined;
        if (offset >= chunk.length) {
          callback();
          return;
        }
        this.push(chunk.subarray(offset, offset + slice));
        offset += slice;
        timer = setTimeout(next, 100);
      };
      next();
    },
    destroy(error, callback) {
      if (timer !== undefined) clearTimeout(timer);
      callback(error);
    },
  });
}
