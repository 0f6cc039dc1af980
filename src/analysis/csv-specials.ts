import { WASM_BINARY } from "./csv-specials-wasm.js";

/**
 * Where the bytes that end or open a CSV field (comma, quote, LF, CR) are, found 16 at a time by
 * csv-specials.wat. The scanner's state machine then visits those bytes only: about 18 per row of
 * a campaign export instead of its 165, which made the byte loop 40-50% of a summary's CPU.
 */

/** Largest window one `index` call takes: the module's memory holds this much input. */
export const MAX_WINDOW = 1 << 16;
const PADDING = 16;
const POSITIONS_AT = MAX_WINDOW + PADDING;

interface SpecialsExports {
  memory: { buffer: ArrayBuffer };
  index(len: number, base: number): number;
}

/** The part of the WebAssembly API used here (Node's type definitions do not declare it). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: object };
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

let compiled: object | undefined;

/** One per scanner: an instance has its own memory, so scanners on one thread never share it. */
export class SpecialsIndex {
  private readonly exports: SpecialsExports;
  private readonly input: Uint8Array;
  /** The positions the last `index` call found, from 0 to its result. */
  readonly positions: Int32Array;

  constructor() {
    compiled ??= new wasm.Module(WASM_BINARY);
    this.exports = new wasm.Instance(compiled).exports as SpecialsExports;
    // The memory never grows (fixed size in the .wat), so these views stay valid.
    const buffer = this.exports.memory.buffer;
    this.input = new Uint8Array(buffer, 0, MAX_WINDOW + PADDING);
    this.positions = new Int32Array(buffer, POSITIONS_AT, MAX_WINDOW);
  }

  /**
   * Finds the special bytes of `data[from, to)` (at most MAX_WINDOW bytes) and returns how many:
   * `positions[0..n)` are their offsets in `data`, increasing.
   */
  index(data: Uint8Array, from: number, to: number): number {
    const len = to - from;
    if (len > MAX_WINDOW || len < 0) throw new RangeError(`window of ${len} bytes`);
    this.input.set(data.subarray(from, to), 0);
    // The last 16-byte load reads past the window: zeros are not special.
    this.input.fill(0, len, len + PADDING);
    return this.exports.index(len, from);
  }
}
