import { describe, expect, it } from "vitest";
import { warmUpRowPass } from "../../../src/analysis/campaign/warm-up.js";

describe("warmUpRowPass", () => {
  it("reads its sample without a problem, through the paths a real export takes, once", () => {
    const tallies = warmUpRowPass("purchase");
    expect(tallies).toHaveLength(3);
    for (const t of tallies) {
      expect(t.rows).toBe(168);
      expect(t.pendingBadRecord).toBeUndefined();
      expect(t.warnings).toEqual([]);
      // Quoted, escaped and plain task ids, each a round of its own in both groups.
      expect(t.rounds.map((r) => r.task_id).sort()).toEqual([
        'tsk_"b"',
        'tsk_"b"',
        "tsk_a",
        "tsk_a",
      ]);
      expect([...t.errorCodes.keys()].length).toBeGreaterThan(1);
      expect(t.revenue.byCurrency.get("KRW")?.conversions).toBeGreaterThan(0);
      expect(t.unidentified).toBeGreaterThan(0);
    }
    expect(warmUpRowPass(undefined)).toEqual([]);
  });
});
