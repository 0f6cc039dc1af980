import { log } from "../log.js";
import type {
  AuditCall,
  AuditCaller,
  AuditQuery,
  AuditRecord,
  AuditTrail,
} from "./audit-record.js";

/**
 * A trail in front of another that bounds what denials can write. A caller refused again and
 * again (a client retrying a call its scopes do not allow, or a flood on purpose) gets its first
 * `perWindow` denials recorded in each window; the rest are counted, and one `(suppressed)`
 * record says how many when the window ends (or when the trail closes). So one caller's denials
 * add at most perWindow + 1 records per window whatever it sends. Calls that ran are recorded
 * as they come: each one was real work, bounded by the server's concurrency.
 */
export interface DenialLimits {
  perWindow: number;
  windowMs: number;
  /** Callers tracked at once; past that, new ones share one count. */
  maxCallers: number;
}

export const DENIAL_LIMITS: DenialLimits = { perWindow: 5, windowMs: 60_000, maxCallers: 1_000 };

interface Window {
  caller: AuditCaller;
  startedAt: number;
  written: number;
  suppressed: number;
  firstAt: number;
  lastAt: number;
  timer: NodeJS.Timeout | undefined;
}

/** Whom the denials of callers past maxCallers are recorded under, together. */
const CROWD: AuditCaller = { kind: "anonymous", name: "(other callers)" };

function keyOf(caller: AuditCaller): string {
  return `${caller.kind}\u0000${caller.name}`;
}

export class DenialLimitedTrail implements AuditTrail {
  readonly location: string;
  private readonly windows = new Map<string, Window>();
  private readonly limits: DenialLimits;
  private readonly now: () => number;

  constructor(
    private readonly inner: AuditTrail,
    { now, ...limits }: Partial<DenialLimits> & { now?: () => number } = {},
  ) {
    this.location = inner.location;
    this.limits = { ...DENIAL_LIMITS, ...limits };
    this.now = now ?? Date.now;
  }

  record(call: AuditCall): Promise<void> {
    try {
      if (call.outcome !== "denied") return this.inner.record(call);
      const window = this.windowOf(call.caller);
      if (window.written < this.limits.perWindow) {
        window.written += 1;
        return this.inner.record(call);
      }
      if (window.suppressed === 0) {
        window.firstAt = call.at;
        const left = Math.max(0, window.startedAt + this.limits.windowMs - this.now());
        window.timer = setTimeout(() => this.endWindow(window), left);
        window.timer.unref();
      }
      window.suppressed += 1;
      window.lastAt = call.at;
    } catch (error) {
      log.warn("audit trail not written", {
        error: error instanceof Error ? error.name : typeof error,
      });
    }
    return Promise.resolve();
  }

  list(query?: AuditQuery): Promise<AuditRecord[]> {
    return this.inner.list(query);
  }

  async close(): Promise<void> {
    for (const window of [...this.windows.values()]) this.endWindow(window);
    await this.inner.close();
  }

  /** The caller's open window, a new one when it has none or its window is over. */
  private windowOf(caller: AuditCaller): Window {
    const now = this.now();
    let key = keyOf(caller);
    let window = this.windows.get(key);
    if (window !== undefined && now - window.startedAt >= this.limits.windowMs) {
      this.endWindow(window);
      window = undefined;
    }
    if (window !== undefined) return window;
    if (this.windows.size >= this.limits.maxCallers) this.closeEnded(now);
    if (this.windows.size >= this.limits.maxCallers) {
      key = keyOf(CROWD);
      window = this.windows.get(key);
      if (window !== undefined) return window;
      caller = CROWD;
    }
    window = {
      caller,
      startedAt: now,
      written: 0,
      suppressed: 0,
      firstAt: 0,
      lastAt: 0,
      timer: undefined,
    };
    this.windows.set(key, window);
    return window;
  }

  private closeEnded(now: number): void {
    for (const window of [...this.windows.values()]) {
      if (now - window.startedAt >= this.limits.windowMs) this.endWindow(window);
    }
  }

  /** Ends a window, writing the count of what it left out. */
  private endWindow(window: Window): void {
    clearTimeout(window.timer);
    const key = keyOf(window.caller);
    if (this.windows.get(key) === window) this.windows.delete(key);
    if (window.suppressed === 0) return;
    const count = window.suppressed;
    window.suppressed = 0;
    void this.inner.record({
      at: window.firstAt,
      caller: window.caller,
      tool: "(suppressed)",
      args: {
        suppressed: count,
        first_at: new Date(window.firstAt).toISOString(),
        last_at: new Date(window.lastAt).toISOString(),
      },
      outcome: "denied",
      error: `${count} more denials suppressed`,
      durationMs: 0,
    });
  }
}
