import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { distinctOver } from "../../../src/analysis/campaign/distinct-users.js";
import { hashBytes, U64Map } from "../../../src/analysis/csv/hash-table.js";

/** A plain Map keyed by the two halves as text: the reference the typed-array map must match. */
function reference(ops: [number, number, number][], mode: "add" | "addMin"): Map<string, number> {
  const ref = new Map<string, number>();
  for (const [hi, lo, v] of ops) {
    if (hi === 0 && lo === 0) continue;
    // The map hands keys back as signed 32-bit halves.
    const k = `${hi | 0}:${lo | 0}`;
    const cur = ref.get(k);
    if (cur === undefined) ref.set(k, v);
    else if (mode === "addMin" && v < cur) ref.set(k, v);
  }
  return ref;
}

const op = fc.tuple(
  // Few distinct halves so keys share slots and halves; 0 is left out as the empty marker.
  fc.integer({ min: 0, max: 40 }).map((n) => (n === 0 ? 1 : n * 0x9e3779b1) >>> 0),
  fc.integer({ min: 0, max: 40 }).map((n) => (n * 0x85ebca6b) >>> 0),
  fc.integer({ min: -2147483648, max: 2147483647 }),
);

describe("U64Map", () => {
  it("keeps signed values, minima and sizes like a Map, across growth", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 400 }), fc.boolean(), (ops, minMode) => {
        const map = new U64Map(16, true);
        for (const [hi, lo, v] of ops) {
          if (hi === 0 && lo === 0) continue;
          if (minMode) map.addMin(hi, lo, v);
          else map.add(hi, lo, v);
        }
        const ref = reference(ops, minMode ? "addMin" : "add");
        expect(map.size).toBe(ref.size);
        const seen = new Map<string, number>();
        map.forEach((hi, lo, v) => {
          seen.set(`${hi}:${lo}`, v);
        });
        expect(seen).toEqual(ref);
        for (const [k, v] of ref) {
          const [hi, lo] = k.split(":").map(Number) as [number, number];
          expect(map.has(hi, lo)).toBe(true);
          expect(map.get(hi, lo, 12345)).toBe(v);
        }
        expect(map.has(7, 7)).toBe(ref.has("7:7"));
        expect(map.get(7, 7, -99)).toBe(ref.get("7:7") ?? -99);
      }),
      { numRuns: 200 },
    );
  });

  it("as a set counts distinct keys and reports values as 0", () => {
    const set = new U64Map(16, false);
    let added = 0;
    for (let i = 1; i <= 5000; i++) if (set.add(i % 1000, (i * 7) % 13)) added++;
    // Distinct (i % 1000, i*7 % 13) pairs, counted independently.
    const distinct = new Set<string>();
    for (let i = 1; i <= 5000; i++) distinct.add(`${i % 1000}:${(i * 7) % 13}`);
    distinct.delete("0:0");
    expect(added).toBe(distinct.size);
    expect(set.size).toBe(distinct.size);
    let values = 0;
    set.forEach((_hi, _lo, v) => {
      values += v === 0 ? 0 : 1;
    });
    expect(values).toBe(0);
    expect(set.get(1, 7, -5)).toBe(-5);
  });

  it.each([0, 1, 12, 13, 1000, 100_000])(
    "forEntries(%i) holds that many keys without growing",
    (n) => {
      for (const withValues of [true, false]) {
        const map = U64Map.forEntries(n, withValues);
        const before = map.capacity;
        // Low halves like a hash's (xorshift): `Math.imul(i, 0x9e3779b1)` cancels the table's own
        // slot mixing (lo ^ imul(hi, 0x9e3779b1)), put every key in slot 0 and took ~30 s.
        let lo = 0x2545f491;
        for (let i = 1; i <= n; i++) {
          lo ^= lo << 13;
          lo ^= lo >>> 17;
          lo ^= lo << 5;
          map.addMin(i, lo >>> 0, i);
        }
        expect(map.size).toBe(n);
        expect(map.capacity).toBe(before);
        // Not more than twice what the load limit (3/4) needs, and never below the 16-slot minimum.
        expect(before).toBeLessThanOrEqual(Math.max(16, Math.ceil((n * 8) / 3) + 2));
        map.addMin(n + 1, 1, 0);
        // One key past the load limit grows the table by half; one within it leaves it as it was.
        const grows = (n + 1) * 4 > before * 3;
        expect(map.capacity).toBe(grows ? Math.ceil(before * 1.5) : before);
      }
    },
  );
});

describe("U64Map merging (partial maps of threads)", () => {
  it("is the union with the smaller value, through toState/fromState, whatever the sizes", () => {
    const small = new U64Map(16);
    const big = U64Map.forEntries(50_000);
    const expected = new Map<string, number>();
    const put = (map: U64Map, hi: number, lo: number, v: number) => {
      map.addMin(hi, lo, v);
      const key = `${hi | 0}/${lo | 0}`;
      expected.set(key, Math.min(expected.get(key) ?? v, v));
    };
    for (let i = 1; i <= 40_000; i++) put(big, i, Math.imul(i, 0x9e3779b1), (i * 7) % 1000);
    for (let i = 30_000; i <= 45_000; i++) put(small, i, Math.imul(i, 0x9e3779b1), (i * 3) % 1000);
    // The state crosses threads as plain data; the map is rebuilt around the same slots.
    const copy = U64Map.fromState(structuredClone(big.toState()));
    small.mergeMin(copy);
    expect(small.size).toBe(expected.size);
    let seen = 0;
    small.forEach((hi, lo, v) => {
      expect(v).toBe(expected.get(`${hi}/${lo}`));
      seen++;
    });
    expect(seen).toBe(expected.size);
  });
});

describe("U64Map merging into an empty map", () => {
  it("takes the other's keys and values, whether it is larger or smaller than the other", () => {
    for (const emptyEntries of [0, 10, 5000]) {
      const other = new U64Map(16);
      for (let i = 1; i <= 1000; i++) other.addMin(i, Math.imul(i, 0x9e3779b1), i % 77);
      const into = U64Map.forEntries(emptyEntries);
      into.mergeMin(U64Map.fromState(structuredClone(other.toState())));
      expect(into.size).toBe(1000);
      for (let i = 1; i <= 1000; i++)
        expect(into.get(i, Math.imul(i, 0x9e3779b1), -1)).toBe(i % 77);
      // Still a working map afterwards: it grows and keeps minima.
      for (let i = 1; i <= 3000; i++) into.addMin(i, Math.imul(i, 0x9e3779b1), -i);
      expect(into.size).toBe(3000);
      expect(into.get(500, Math.imul(500, 0x9e3779b1), 0)).toBe(-500);
    }
  });
});

describe("distinctOver (distinct keys over many maps, part by part)", () => {
  it("counts each key once whatever the number of parts, probe runs wrapping included", () => {
    fc.assert(
      fc.property(
        // Maps of keys from a small pool, so maps share keys; small tables at high load, so
        // probe runs are long and some wrap past the end of the table.
        fc.array(fc.array(fc.integer({ min: 1, max: 600 }), { maxLength: 300 }), {
          minLength: 1,
          maxLength: 6,
        }),
        fc.constantFrom(1, 3, 16, 100, 1 << 17),
        fc.boolean(),
        (keyLists, keysPerPart, withValues) => {
          const reference = new Set<string>();
          const maps = keyLists.map((keys) => {
            const map = new U64Map(16, withValues);
            for (const k of keys) {
              // Halves like the user hashes' (fmix-like spread), lo sometimes shared.
              const hi = Math.imul(k, 0x9e3779b1) ^ (k >>> 3);
              const lo = Math.imul(k % 97, 0x85ebca6b) | 1;
              map.addMin(hi, lo, k);
              reference.add(`${hi | 0}/${lo | 0}`);
            }
            return map;
          });
          expect(distinctOver(maps, (m) => m, keysPerPart)).toBe(reference.size);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("reads every key of a full table whose runs wrap, for every part", () => {
    // 12 keys in 16 slots: the load limit, with the runs that crossing the end gives.
    for (let seed = 1; seed <= 200; seed++) {
      const map = new U64Map(16, false);
      const keys = new Set<string>();
      let x = seed;
      while (map.size < 12) {
        x = Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) + 0x6b43a9b5;
        const hi = x | 0;
        const lo = Math.imul(x, 0x27d4eb2f) | 1;
        map.add(hi, lo);
        keys.add(`${hi}/${lo}`);
      }
      expect(map.capacity).toBe(16);
      for (const perPart of [1, 2, 5, 12]) expect(distinctOver([map], (m) => m, perPart)).toBe(12);
    }
  });
});

describe("hashBytes (user ids to 64-bit keys)", () => {
  const keyOf = (bytes: Uint8Array, at: number, seed: number): string => {
    const buf = new Uint8Array(at + bytes.length + 3);
    buf.set(bytes, at);
    const out = new Int32Array(2);
    hashBytes(new DataView(buf.buffer), at, at + bytes.length, seed, out);
    return `${out[0]}:${out[1]}`;
  };

  it("depends on the bytes only, not on where they sit or what surrounds them", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), fc.nat(7), fc.nat(7), (bytes, a, b) => {
        expect(keyOf(bytes, a, 0x51)).toBe(keyOf(bytes, b, 0x51));
      }),
    );
  });

  it("gives distinct keys to 300,000 ids of the service's shapes, per seed, and differs by seed", () => {
    const seen = new Set<string>();
    const text = new TextEncoder();
    let n = 0;
    for (let i = 0; i < 100_000; i++) {
      const ids = [
        `member${String(i).padStart(6, "0")}@example.com`,
        (i * 2654435761).toString(16).padStart(24, "0").slice(-24),
        `u${i}`,
      ];
      for (const id of ids) {
        const bytes = text.encode(id);
        seen.add(keyOf(bytes, i % 4, 0x51));
        n++;
      }
    }
    expect(seen.size).toBe(n);
    const id = text.encode("member000001@example.com");
    expect(keyOf(id, 0, 0x51)).not.toBe(keyOf(id, 0, 0x75));
    // Trailing bytes (lengths not a multiple of 4) count, zero bytes included.
    expect(keyOf(Uint8Array.of(1, 2, 3, 4, 5), 0, 0x51)).not.toBe(
      keyOf(Uint8Array.of(1, 2, 3, 4, 5, 0), 0, 0x51),
    );
    expect(keyOf(Uint8Array.of(), 0, 0x51)).not.toBe(keyOf(Uint8Array.of(0), 0, 0x51));
  });
});
