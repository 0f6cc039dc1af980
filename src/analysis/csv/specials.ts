import {
  ENDS_AT,
  ESCAPED_AT,
  KERNEL_FIELDS,
  MAX_WINDOW,
  PADDING,
  POSITIONS_AT,
  RECORD_AT,
  STARTS_AT,
} from "./specials-layout.js";
import { WASM_BINARY } from "./specials-wasm.js";

/**
 * Where the bytes that end or open a CSV field (comma, quote, LF, CR) are, found 64 at a time by
 * specials.wat. The scanner's state machine then visits those bytes only: about 18 per row of
 * a campaign export instead of all its 165. The same module reads a record of unquoted fields
 * whole (`record`) and hashes its key fields.
 */

/** The largest window `index` takes and the most fields `record` reads. */
export { KERNEL_FIELDS, MAX_WINDOW } from "./specials-layout.js";

interface SpecialsExports {
  memory: { buffer: ArrayBuffer };
  index(len: number, base: number): number;
  record(
    k: number,
    found: number,
    base: number,
    start: number,
    maxFields: number,
    maxField: number,
    keyFields: number,
  ): number;
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
  /** The fields of the record `record` read last (CsvRecord's arrays can be these). */
  readonly starts: Int32Array;
  readonly ends: Int32Array;
  readonly escaped: Uint8Array;
  /**
   * After a `record` that read one: its field count, the offset after its line break, and the
   * 64-bit hash of its first `keyFields` fields' bytes as two halves (0, 0 when it has fewer).
   */
  readonly read: Int32Array;
  /**
   * Reads the record at `start` (see specials.wat) when its fields are all unquoted and it
   * ends with an LF in the window last indexed (`base` is that window's start): returns the
   * index of the position after the LF, or -1 when the caller must read the record itself. Its
   * first `keyFields` fields, the commas between them included, are hashed.
   */
  readonly record: SpecialsExports["record"];

  constructor() {
    compiled ??= new wasm.Module(WASM_BINARY);
    this.exports = new wasm.Instance(compiled).exports as SpecialsExports;
    // The memory never grows (fixed size: the layout's PAGES), so these views stay valid.
    const buffer = this.exports.memory.buffer;
    this.input = new Uint8Array(buffer, 0, MAX_WINDOW + PADDING);
    this.positions = new Int32Array(buffer, POSITIONS_AT, MAX_WINDOW);
    this.starts = new Int32Array(buffer, STARTS_AT, KERNEL_FIELDS);
    this.ends = new Int32Array(buffer, ENDS_AT, KERNEL_FIELDS);
    this.escaped = new Uint8Array(buffer, ESCAPED_AT, KERNEL_FIELDS);
    this.read = new Int32Array(buffer, RECORD_AT, 4);
    this.record = this.exports.record;
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
