/**
 * Seeded randomness for the synthetic world. Every piece of data is derived from a hash of
 * (seed, entity, index), so any round or record can be regenerated on its own, in any order,
 * without keeping state between calls.
 */

/** Final mix of murmur3: spreads every input bit over the 32-bit result. */
export function mix32(value: number): number {
  let h = value | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Hash of two integers; order matters. */
export function hash2(a: number, b: number): number {
  return mix32((mix32(a) + Math.imul(b | 0, 0x9e3779b1)) | 0);
}

/** Hash of three integers; order matters. */
export function hash3(a: number, b: number, c: number): number {
  return hash2(hash2(a, b), c);
}

/** FNV-1a of a string, for keying entities by their ids. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Lower-case hex of a 32-bit value, zero-padded to 8 characters. */
export function hex8(value: number): string {
  return (value >>> 0).toString(16).padStart(8, "0");
}

/**
 * mulberry32: tiny, fast and good enough for synthetic data. Reseedable so the hot path reuses
 * one instance instead of allocating per record.
 */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed | 0;
  }

  reseed(seed: number): void {
    this.state = seed | 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Integer in [min, max]. */
  range(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[this.int(items.length)];
    if (item === undefined) throw new Error("pick from an empty list");
    return item;
  }
}
