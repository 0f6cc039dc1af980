/**
 * Exact-enough distinct counting without a JS string per user id: each id's bytes are hashed to
 * 64 bits (two independent 32-bit hashes) and kept in an open-addressing table of typed arrays,
 * 8 bytes of key plus 4 of value per slot. Two different ids collide with probability 2^-64 per
 * pair, so among n ids a count is off with probability about n^2 / 2^65: below 1e-7 for the
 * 2,000,000 sends an export may hold. Memory stays near 24 bytes per distinct id at worst.
 */

const EMPTY = 0;

/** 64-bit hash of `buf[start, end)` with a seed; returned through `out` to avoid allocation. */
export function hashBytes(
  buf: Uint8Array,
  start: number,
  end: number,
  seed: number,
  out: Uint32Array,
): void {
  let h1 = 0x811c9dc5 ^ seed;
  let h2 = 0x9747b28c ^ Math.imul(seed, 0x85ebca6b);
  for (let i = start; i < end; i++) {
    const b = buf[i] as number;
    h1 = Math.imul(h1 ^ b, 0x01000193);
    h2 = Math.imul(h2 ^ b, 0x5bd1e995);
    h2 ^= h2 >>> 13;
  }
  out[0] = fmix(h1 ^ (end - start));
  out[1] = fmix(h2 ^ Math.imul(end - start, 0x27d4eb2f));
  // The all-zero key marks an empty slot.
  if (out[0] === EMPTY && out[1] === EMPTY) out[1] = 1;
}

function fmix(x: number): number {
  let h = x;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A map from 64-bit keys to int32 values (a set when values are ignored). */
export class U64Map {
  private hi: Uint32Array;
  private lo: Uint32Array;
  /** Absent for plain sets, which then cost 8 bytes per slot. */
  private vals: Int32Array | null;
  private mask: number;
  size = 0;

  constructor(initialCapacity = 16, withValues = true) {
    let cap = 16;
    while (cap < initialCapacity) cap *= 2;
    this.hi = new Uint32Array(cap);
    this.lo = new Uint32Array(cap);
    this.vals = withValues ? new Int32Array(cap) : null;
    this.mask = cap - 1;
  }

  private slot(hi: number, lo: number): number {
    let i = (lo ^ Math.imul(hi, 0x9e3779b1)) & this.mask;
    for (;;) {
      const h = this.hi[i] as number;
      const l = this.lo[i] as number;
      if ((h === hi && l === lo) || (h === EMPTY && l === EMPTY)) return i;
      i = (i + 1) & this.mask;
    }
  }

  has(hi: number, lo: number): boolean {
    const i = this.slot(hi, lo);
    return this.hi[i] === hi && this.lo[i] === lo;
  }

  get(hi: number, lo: number, fallback: number): number {
    const i = this.slot(hi, lo);
    return this.hi[i] === hi && this.lo[i] === lo && this.vals !== null
      ? (this.vals[i] as number)
      : fallback;
  }

  /** Adds the key with `value` when absent; returns true when it was added. */
  add(hi: number, lo: number, value = 0): boolean {
    const i = this.slot(hi, lo);
    if (this.hi[i] === hi && this.lo[i] === lo) return false;
    this.hi[i] = hi;
    this.lo[i] = lo;
    if (this.vals !== null) this.vals[i] = value;
    this.size++;
    if (this.size * 4 > this.hi.length * 3) this.grow();
    return true;
  }

  /** Sets the value to min(current, value), adding the key when absent. */
  addMin(hi: number, lo: number, value: number): void {
    if (this.vals === null) {
      this.add(hi, lo);
      return;
    }
    const i = this.slot(hi, lo);
    if (this.hi[i] === hi && this.lo[i] === lo) {
      if (value < (this.vals[i] as number)) this.vals[i] = value;
      return;
    }
    this.hi[i] = hi;
    this.lo[i] = lo;
    this.vals[i] = value;
    this.size++;
    if (this.size * 4 > this.hi.length * 3) this.grow();
  }

  forEach(fn: (hi: number, lo: number, value: number) => void): void {
    const cap = this.hi.length;
    for (let i = 0; i < cap; i++) {
      const h = this.hi[i] as number;
      const l = this.lo[i] as number;
      if (h !== EMPTY || l !== EMPTY) fn(h, l, this.vals === null ? 0 : (this.vals[i] as number));
    }
  }

  private grow(): void {
    const oldHi = this.hi;
    const oldLo = this.lo;
    const oldVals = this.vals;
    const cap = oldHi.length * 2;
    this.hi = new Uint32Array(cap);
    this.lo = new Uint32Array(cap);
    this.vals = oldVals === null ? null : new Int32Array(cap);
    this.mask = cap - 1;
    for (let j = 0; j < oldHi.length; j++) {
      const h = oldHi[j] as number;
      const l = oldLo[j] as number;
      if (h === EMPTY && l === EMPTY) continue;
      const i = this.slot(h, l);
      this.hi[i] = h;
      this.lo[i] = l;
      if (this.vals !== null && oldVals !== null) this.vals[i] = oldVals[j] as number;
    }
  }
}
