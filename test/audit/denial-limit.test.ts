import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AuditCall, AuditCaller, AuditRecord } from "../../src/audit/audit-record.js";
import { DENIAL_LIMITS, DenialLimitedTrail } from "../../src/audit/denial-limit.js";
import { FileAuditTrail } from "../../src/audit/file-trail.js";

/**
 * The rate limit on denial records, in front of a real trail in a data folder: a caller refused
 * again and again adds at most `perWindow` records and one count per window.
 */
let folder: string;

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), "crm-denials-"));
});

afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

const T0 = Date.UTC(2026, 10, 22, 0, 0, 0);
const MALLORY: AuditCaller = { kind: "token", name: "mallory" };
const BOB: AuditCaller = { kind: "token", name: "bob" };

function denial(at: number, caller = MALLORY): AuditCall {
  return {
    at,
    caller,
    tool: "start_export",
    args: {},
    outcome: "denied",
    error: "insufficient_scope",
    durationMs: 0,
  };
}

/** A trail whose clock the test moves. */
function limited(options: { perWindow?: number; windowMs?: number; maxCallers?: number } = {}) {
  let now = T0;
  const trail = new DenialLimitedTrail(new FileAuditTrail(folder), { ...options, now: () => now });
  return {
    trail,
    advance(ms: number) {
      now += ms;
    },
    now: () => now,
  };
}

const summaries = (records: AuditRecord[]) => records.filter((r) => r.tool === "(suppressed)");

describe("denial records, rate-limited per caller", () => {
  it("keeps the first denials of a window and counts the rest in one record", async () => {
    const { trail } = limited();
    for (let i = 0; i < 200; i++) await trail.record(denial(T0 + i));
    // Another caller has its own allowance; calls that ran are never limited.
    await trail.record(denial(T0, BOB));
    for (let i = 0; i < 20; i++) {
      await trail.record({ ...denial(T0 + i, MALLORY), outcome: "ok", error: undefined });
    }
    expect((await trail.list()).length).toBe(DENIAL_LIMITS.perWindow + 1 + 20);
    await trail.close();

    const records = await trail.list();
    const mallory = records.filter((r) => r.caller === "mallory" && r.outcome === "denied");
    expect(mallory).toHaveLength(DENIAL_LIMITS.perWindow + 1);
    const suppressed = 200 - DENIAL_LIMITS.perWindow;
    expect(summaries(records)).toEqual([
      {
        at: new Date(T0 + DENIAL_LIMITS.perWindow).toISOString(),
        caller: "mallory",
        caller_kind: "token",
        tool: "(suppressed)",
        arguments: {
          suppressed,
          first_at: new Date(T0 + DENIAL_LIMITS.perWindow).toISOString(),
          last_at: new Date(T0 + 199).toISOString(),
        },
        outcome: "denied",
        error: `${suppressed} more denials suppressed`,
        duration_ms: 0,
      },
    ]);
    expect(records.filter((r) => r.caller === "bob")).toHaveLength(1);
  });

  it("starts a new window once the last one is over, writing the old one's count first", async () => {
    const clock = limited({ perWindow: 2, windowMs: 60_000 });
    for (let i = 0; i < 5; i++) await clock.trail.record(denial(clock.now()));
    clock.advance(60_000);
    await clock.trail.record(denial(clock.now()));
    const records = await clock.trail.list();
    expect(records.map((r) => r.error)).toEqual([
      "insufficient_scope",
      "insufficient_scope",
      "3 more denials suppressed",
      "insufficient_scope",
    ]);
    await clock.trail.close();
    // Nothing was left out of the second window: no second count.
    expect(summaries(await clock.trail.list())).toHaveLength(1);
  });

  it("writes a window's count when the window ends, without another denial", async () => {
    const trail = new DenialLimitedTrail(new FileAuditTrail(folder), {
      perWindow: 1,
      windowMs: 50,
    });
    try {
      for (let i = 0; i < 4; i++) await trail.record(denial(Date.now()));
      const deadline = Date.now() + 10_000;
      let found: AuditRecord[] = [];
      while (found.length === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        found = summaries(await trail.list());
      }
      expect(found.map((r) => r.error)).toEqual(["3 more denials suppressed"]);
    } finally {
      await trail.close();
    }
  });

  it("bounds the callers it tracks: past the bound, new callers share one allowance", async () => {
    const { trail } = limited({ perWindow: 1, maxCallers: 3 });
    for (let i = 0; i < 50; i++) {
      await trail.record(denial(T0, { kind: "oauth", name: `oauth:user-${i}` }));
    }
    await trail.close();
    const records = await trail.list();
    // Three callers tracked, then one shared allowance of one record and one count.
    expect(records.filter((r) => r.tool === "start_export")).toHaveLength(4);
    expect(summaries(records)).toEqual([
      expect.objectContaining({ caller: "(other callers)", error: "46 more denials suppressed" }),
    ]);
    const lines = (await readFile(join(folder, "audit", "calls.jsonl"), "utf8")).trim().split("\n");
    expect(lines).toHaveLength(5);
  });
});
