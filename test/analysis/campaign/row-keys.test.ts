import { describe, expect, it } from "vitest";
import { newRound } from "../../../src/analysis/campaign/round-hash-table.js";
import { RowKeys } from "../../../src/analysis/campaign/row-keys.js";
import { InternTable } from "../../../src/analysis/csv/intern-table.js";

const sizes = { receipts: 0, firstOpen: 0, clicks: 0, conversions: 0, control: 0 };

describe("RowKeys", () => {
  it("answers only the exact 64-bit key it was given, keeping the latest pair per slot", () => {
    const keys = new RowKeys();
    const types = new InternTable(10, "event_type");
    const a = { round: newRound("t", "2024-01-01 00:00:00", "A", sizes), type: types.intern("x") };
    const b = { round: newRound("t", "2024-01-01 00:00:00", "B", sizes), type: types.intern("y") };
    const hashA = Int32Array.of(5, 7);
    expect(keys.get(hashA)).toBeUndefined();
    keys.set(hashA, a.round, a.type);
    expect(keys.get(Int32Array.of(5, 7))).toEqual(a);
    // The same slot (low bits) with another high half, or another low half: not this key.
    expect(keys.get(Int32Array.of(5, 8))).toBeUndefined();
    expect(keys.get(Int32Array.of(5 + 1024, 7))).toBeUndefined();
    keys.set(Int32Array.of(5 + 1024, 7), b.round, b.type);
    expect(keys.get(Int32Array.of(5 + 1024, 7))).toEqual(b);
    expect(keys.get(hashA)).toBeUndefined();
    expect(keys.get(Int32Array.of(-1, -1))).toBeUndefined();
  });
});
