import { setTimeout as sleep } from "node:timers/promises";
import { log } from "../log.js";
import { DatabaseUnavailableError } from "./postgres-unavailable.js";

/** A write kept for later: what it is (for the log) and how to do it. */
export interface HeldWrite {
  what: string;
  write: () => Promise<unknown>;
}

/** Writes held at most: an audit record is at most about 8 KB, so a full backlog stays under 80 MB. */
const MAX_HELD = 10_000;
const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 2_000;

/**
 * Writes that must not be lost while the database is unreachable: a job the service created, a
 * budget slot given back, an audit record. They are held in memory in the order they failed and
 * written in that order as soon as the database answers again: by a timer (backing off up to
 * 2 s between tries), and before any other statement of the same connection, so that what a
 * call reads includes what an earlier call could not write (a retried start_export finds the
 * job its first try created instead of creating another). In memory only: what a process still
 * holds when it ends is lost, and logged (see settle).
 */
export class WriteBacklog {
  private readonly held: HeldWrite[] = [];
  private running: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private retryMs = FIRST_RETRY_MS;

  get size(): number {
    return this.held.length;
  }

  /** Holds `write` for later (a full backlog drops it, logged as lost). */
  hold(write: HeldWrite): void {
    if (this.held.length >= MAX_HELD) {
      log.error("database write lost: too many writes already wait for the database", {
        what: write.what,
        waiting: this.held.length,
      });
      return;
    }
    this.held.push(write);
    this.retryLater();
  }

  /**
   * Writes everything held, in order. Rejects with DatabaseUnavailableError while the database
   * is still away (the rest stays held, tried again later).
   */
  flush(): Promise<void> {
    if (this.held.length === 0) return Promise.resolve();
    this.running ??= this.writeAll().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Tries to write everything for up to `ms`; returns what could not be written. */
  async settle(ms: number): Promise<HeldWrite[]> {
    const deadline = performance.now() + ms;
    while (this.held.length > 0 && performance.now() < deadline) {
      try {
        await this.flush();
      } catch {
        await sleep(Math.max(0, Math.min(FIRST_RETRY_MS, deadline - performance.now())));
      }
    }
    clearTimeout(this.timer);
    this.timer = undefined;
    return [...this.held];
  }

  private async writeAll(): Promise<void> {
    for (let next = this.held[0]; next !== undefined; next = this.held[0]) {
      try {
        await next.write();
      } catch (error) {
        if (error instanceof DatabaseUnavailableError) {
          this.retryLater();
          throw error;
        }
        // The database answered and refused this statement: trying again cannot help.
        log.error("database write dropped: the database refused it", {
          what: next.what,
          error: error instanceof Error ? error.message : String(error),
        });
      }
      this.held.shift();
    }
    this.retryMs = FIRST_RETRY_MS;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private retryLater(): void {
    if (this.timer !== undefined) return;
    const wait = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      // A failed try schedules the next one itself.
      this.flush().catch(() => undefined);
    }, wait);
    // Held writes never keep a process alive on their own; close() settles them.
    this.timer.unref();
  }
}
