import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { wasmModuleSource, watToBinary } from "../../scripts/lib/wasm-module-source.mjs";
import { MAX_WINDOW, SpecialsIndex } from "../../src/analysis/csv-specials.js";
import { WASM_BINARY } from "../../src/analysis/csv-specials-wasm.js";

const SPECIAL = new Set([0x2c, 0x22, 0x0a, 0x0d]);

/** The oracle: every special byte of data[from, to), one at a time. */
function naive(data: Uint8Array, from: number, to: number): number[] {
  const out: number[] = [];
  for (let i = from; i < to; i++) if (SPECIAL.has(data[i] as number)) out.push(i);
  return out;
}

function found(index: SpecialsIndex, data: Uint8Array, from: number, to: number): number[] {
  const n = index.index(data, from, to);
  return Array.from(index.positions.subarray(0, n));
}

describe("the special bytes' index (csv-specials.wat)", () => {
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

  it("is the binary its .wat source assembles to (run npm run build:wasm after editing it)", async () => {
    const watPath = fileURLToPath(new URL("../../src/analysis/csv-specials.wat", import.meta.url));
    const binary: Buffer = await watToBinary("csv-specials.wat", readFileSync(watPath, "utf8"));
    expect(Buffer.from(WASM_BINARY).equals(binary)).toBe(true);
    const modulePath = fileURLToPath(
      new URL("../../src/analysis/csv-specials-wasm.ts", import.meta.url),
    );
    expect(readFileSync(modulePath, "utf8")).toBe(wasmModuleSource("csv-specials.wat", binary));
  });
});
