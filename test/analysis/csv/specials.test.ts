import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  assembleWat,
  fillWat,
  wasmModuleSource,
} from "../../../scripts/lib/wasm-module-source.mjs";
import { MAX_WINDOW, SpecialsIndex } from "../../../src/analysis/csv/specials.js";
import { PAGES, RECORD_AT } from "../../../src/analysis/csv/specials-layout.js";
import { WASM_BINARY } from "../../../src/analysis/csv/specials-wasm.js";

const SPECIAL = new Set([0x2c, 0x22, 0x0a, 0x0d]);

/** The oracle: every special byte of data[from, to), one at a time. */
function naive(data: Uint8Array, from: number, to: number): number[] {
  const out: number[] = [];
  for (let i = from; i < to; i++) if (SPECIAL.has(data[i] as number)) out.push(i);
  return out;
}

/**
 * The oracle of `record`: the fields of the record at `start` when all are unquoted and an LF or
 * CR LF ends it inside the data, each at most `maxField` bytes and at most `maxFields` of them.
 */
function oracleRecord(
  data: Uint8Array,
  start: number,
  maxFields: number,
  maxField: number,
): { starts: number[]; ends: number[]; after: number } | undefined {
  const starts: number[] = [];
  const ends: number[] = [];
  let fieldStart = start;
  for (let i = start; i < data.length; i++) {
    const b = data[i] as number;
    if (!SPECIAL.has(b)) continue;
    if (starts.length >= maxFields || i - fieldStart > maxField) return undefined;
    if (b === 0x22) return undefined;
    starts.push(fieldStart);
    ends.push(i);
    if (b === 0x2c) {
      fieldStart = i + 1;
      continue;
    }
    if (b === 0x0a) return { starts, ends, after: i + 1 };
    return data[i + 1] === 0x0a ? { starts, ends, after: i + 2 } : undefined;
  }
  return undefined;
}

const MASK = (1n << 64n) - 1n;
const mul = (a: bigint, b: bigint): bigint => (a * b) & MASK;
const rotl = (x: bigint, r: bigint): bigint => ((x << r) | (x >> (64n - r))) & MASK;
const P1 = 0x9e3779b185ebca87n;
const P2 = 0xc2b2ae3d27d4eb4fn;

/** The oracle of the kernel's key hash (csv/specials.wat keyHash), in 64-bit BigInt steps. */
function oracleKeyHash(bytes: Uint8Array): bigint {
  let h = 0x27d4eb2f165667c5n ^ BigInt(bytes.length);
  for (let at = 0; at < bytes.length; at += 8) {
    let w = 0n;
    for (let j = Math.min(bytes.length, at + 8) - 1; j >= at; j--)
      w = (w << 8n) | BigInt(bytes[j] as number);
    h = (mul(rotl(h ^ mul(rotl(mul(w, P2), 31n), P1), 27n), P1) + 0x85ebca77c2b2ae63n) & MASK;
  }
  h = mul(h ^ (h >> 33n), P2);
  h = mul(h ^ (h >> 29n), 0x165667b19e3779f9n);
  return h ^ (h >> 32n);
}

/** The hash `record` wrote, from its two i32 halves. */
function keyHalves(read: Int32Array): bigint {
  return (
    (BigInt.asUintN(32, BigInt(read[3] as number)) << 32n) |
    BigInt.asUintN(32, BigInt(read[2] as number))
  );
}

function found(index: SpecialsIndex, data: Uint8Array, from: number, to: number): number[] {
  const n = index.index(data, from, to);
  return Array.from(index.positions.subarray(0, n));
}

describe("the special bytes' index (csv/specials.wat)", () => {
  it("finds every comma, quote, LF and CR of any window, in order, as offsets in the data", () => {
    const index = new SpecialsIndex();
    // Bytes drawn mostly from the special ones and their neighbours (0x0b, 0x21, 0x2d, 0x8c...).
    const byte = fc.oneof(
      fc.constantFrom(0x2c, 0x22, 0x0a, 0x0d, 0x0b, 0x21, 0x23, 0x2b, 0x2d, 0xac, 0xa2, 0x8a),
      fc.integer({ min: 0, max: 255 }),
    );
    fc.assert(
      fc.property(
        fc.array(byte, { minLength: 0, maxLength: 300 }),
        fc.nat(),
        fc.nat(),
        (bytes, a, b) => {
          const data = Uint8Array.from(bytes);
          const from = data.length === 0 ? 0 : a % (data.length + 1);
          const to = from + (data.length === 0 ? 0 : b % (data.length - from + 1));
          expect(found(index, data, from, to)).toEqual(naive(data, from, to));
        },
      ),
      { numRuns: 500 },
    );
  });

  it("takes a whole window of special bytes, and nothing of an earlier, longer window", () => {
    const index = new SpecialsIndex();
    const data = new Uint8Array(MAX_WINDOW + 40).fill(0x2c);
    const n = index.index(data, 40, MAX_WINDOW + 40);
    expect(n).toBe(MAX_WINDOW);
    expect(index.positions[0]).toBe(40);
    expect(index.positions[n - 1]).toBe(MAX_WINDOW + 39);
    // A shorter window after it: the bytes the first left in memory past 5 are not read.
    expect(found(index, Buffer.from("ab,cd"), 0, 5)).toEqual([2]);
    expect(() => index.index(data, 0, MAX_WINDOW + 1)).toThrow(RangeError);
  });

  it("reads a record of unquoted fields ended by LF or CR LF, and declines every other record", () => {
    const index = new SpecialsIndex();
    const piece = fc.constantFrom("a", "bc", "한", ",", ",", ",", "\n", "\r\n", "\r", '"', "");
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 60 }),
        fc.nat(),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 12 }),
        fc.integer({ min: 0, max: 4 }),
        (pieces, a, maxFields, maxField, keyFields) => {
          const data = Buffer.from(`x${pieces.join("")}`);
          // A window from `from` to the end; the record starts at `start` (a record start, so
          // not a special byte that a field cannot start with, as the scanner guarantees).
          const from = a % data.length;
          const n = index.index(data, from, data.length);
          const start = from + (a % (data.length - from));
          let k = 0;
          while (k < n && (index.positions[k] as number) < start) k++;
          const next = index.record(k, n, from, start, maxFields, maxField, keyFields);
          const want = oracleRecord(data, start, maxFields, maxField);
          // -1 exactly when the oracle finds no whole record from `start`.
          expect(next === -1).toBe(want === undefined);
          if (want === undefined) return;
          expect(next).toBeGreaterThanOrEqual(0);
          expect(index.read[0]).toBe(want.starts.length);
          expect(index.read[1]).toBe(want.after);
          expect(Array.from(index.starts.subarray(0, want.starts.length))).toEqual(want.starts);
          expect(Array.from(index.ends.subarray(0, want.ends.length))).toEqual(want.ends);
          expect(Array.from(index.escaped.subarray(0, want.ends.length))).toEqual(
            want.ends.map(() => 0),
          );
          // The key: the bytes from the record's start to the end of field keyFields.
          const keyEnd = keyFields === 0 ? undefined : want.ends[keyFields - 1];
          const key = keyEnd === undefined ? 0n : oracleKeyHash(data.subarray(start, keyEnd));
          expect(keyHalves(index.read)).toBe(key);
          // The next position is the first one after the line break.
          const rest = naive(data, from, data.length).filter((p) => p >= want.after);
          expect(next === n ? undefined : index.positions[next]).toBe(rest[0]);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("hashes the same key bytes to the same value wherever they sit, and others apart", () => {
    const index = new SpecialsIndex();
    const hashOf = (text: string, pad: number): bigint => {
      const data = Buffer.from(`${"z".repeat(pad)}${text}\r\n`);
      const n = index.index(data, 0, data.length);
      expect(index.record(0, n, 0, pad, 256, 1 << 20, 3)).toBe(n);
      return keyHalves(index.read);
    };
    const keys = [
      "tsk_1,2024-05-21 12:00:00,그룹A",
      "tsk_1,2024-05-21 12:00:00,그룹B",
      "tsk_1,2024-05-21 12:00:00,",
    ];
    const hashes = keys.map((key) => hashOf(`${key},x,y`, 0));
    expect(new Set(hashes).size).toBe(keys.length);
    for (let pad = 1; pad < 20; pad++)
      expect(hashOf(`${keys[0]},other,fields`, pad)).toBe(hashes[0]);
    // Empty fields still count: the commas are part of the key.
    expect(hashOf(",,,x", 0)).not.toBe(hashOf(",,x,", 0));
  });

  it("is the binary its .wat source assembles to (run npm run build:wasm after editing it)", async () => {
    const watPath = fileURLToPath(
      new URL("../../../src/analysis/csv/specials.wat", import.meta.url),
    );
    const binary: Buffer = await assembleWat(watPath);
    expect(Buffer.from(WASM_BINARY).equals(binary)).toBe(true);
    const modulePath = fileURLToPath(
      new URL("../../../src/analysis/csv/specials-wasm.ts", import.meta.url),
    );
    expect(readFileSync(modulePath, "utf8")).toBe(wasmModuleSource("specials.wat", binary));
  });

  it("takes its memory layout from csv/specials-layout.ts, and no place is left unfilled", () => {
    const index = new SpecialsIndex();
    // The memory the .wat declares is the layout's, and the views are where the layout says.
    expect((index.read.buffer as ArrayBuffer).byteLength).toBe(PAGES * 65536);
    expect(index.read.byteOffset).toBe(RECORD_AT);
    // A place naming no constant is an error, not a zero or a text wabt may read some other way.
    expect(() => fillWat("x.wat", "(i32.const {{NOPE}})", { RECORD_AT })).toThrow(/NOPE/);
    expect(fillWat("x.wat", "(i32.const {{RECORD_AT}})", { RECORD_AT })).toBe(
      `(i32.const ${RECORD_AT})`,
    );
  });
});
