import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { U64Map } from "../../../src/analysis/csv/hash-table.js";
import { MapBatch } from "../../../src/analysis/csv/map-batch.js";

function entries(map: U64Map): string[] {
  const out: string[] = [];
  map.forEach((hi, lo, value) => {
    out.push(`${hi}:${lo}=${value}`);
  });
  return out.sort();
}

describe("MapBatch", () => {
  it("leaves the maps as the same updates applied one by one would, once flushed", () => {
    const update = fc.tuple(
      fc.integer({ min: 0, max: 3 }),
      fc.integer({ min: -5, max: 5 }),
      fc.integer({ min: -3, max: 3 }),
      fc.integer({ min: -1000, max: 1000 }),
    );
    fc.assert(
      fc.property(
        fc.array(update, { maxLength: 400 }),
        fc.integer({ min: 1, max: 9 }),
        (ups, size) => {
          // Two maps with values (earliest times) and two sets, grown from their smallest size.
          const kinds = [true, true, false, false];
          const direct = kinds.map((withValues) => new U64Map(16, withValues));
          const batched = kinds.map((withValues) => new U64Map(16, withValues));
          const batch = new MapBatch(size);
          for (const [m, hi, lo, value] of ups) {
            (direct[m] as U64Map).addMin(hi, lo, value);
            batch.addMin(batched[m] as U64Map, hi, lo, value);
          }
          batch.flush();
          for (let m = 0; m < kinds.length; m++) {
            expect(entries(batched[m] as U64Map)).toEqual(entries(direct[m] as U64Map));
            expect((batched[m] as U64Map).size).toBe((direct[m] as U64Map).size);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it("holds updates back until it is full or flushed", () => {
    const map = new U64Map(16);
    const batch = new MapBatch(3);
    batch.addMin(map, 1, 2, 30);
    batch.addMin(map, 1, 2, 10);
    expect(map.size).toBe(0);
    batch.addMin(map, 3, 4, 5);
    expect(map.get(1, 2, -1)).toBe(10);
    expect(map.size).toBe(2);
    batch.addMin(map, 5, 6, 7);
    batch.flush();
    expect(map.get(5, 6, -1)).toBe(7);
    batch.flush();
    expect(map.size).toBe(3);
  });
});
