/**
 * Exact-enough distinct counting without a JS string per user id: each id's bytes are hashed to
 * 64 bits (two independent 32-bit hashes) and kept in an open-addressing table of typed arrays,
 * 8 bytes of key plus 4 of value per slot. Two different ids collide with probability 2^-64 per
 * pair, so among n ids a count is off with probability about n^2 / 2^65: below 1e-7 for the
 * EXPORT_MAX_SENDS sends an export may hold (api/limits.ts). Memory stays near 24 bytes per distinct id at worst.
 */

const EMPTY = 0;

/** A U64Map's storage as plain data (structured-clonable; `slots.buffer` transferable). */
export interface U64MapState {
  slots: Int32Array;
  stride: number;
  size: number;
}

/**
 * 64-bit hash of the bytes `[start, end)` of `view` with a seed; returned through `out` to avoid
 * allocation. Two different 32-bit hashes of the bytes, read 4 at a time (a user id is 20-30
 * bytes: a quarter of the steps of a byte at a time): murmur3's block step and xxHash32's
 * round, each finished with the length and an avalanche. The halves are signed 32-bit integers:
 * V8 keeps those unboxed (small integers), where unsigned halves above 2^31 became a heap number
 * at every call that passed them on.
 */
export function hashBytes(
  view: DataView,
  start: number,
  end: number,
  seed: number,
  out: Int32Array,
): void {
  let h1 = 0x811c9dc5 ^ seed;
  let h2 = 0x9747b28c ^ Math.imul(seed, 0x85ebca6b);
  let i = start;
  for (; i + 4 <= end; i += 4) {
    const w = view.getInt32(i, true);
    let k = Math.imul(w, 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    h1 ^= Math.imul(k, 0x1b873593);
    h1 = (h1 << 13) | (h1 >>> 19);
    h1 = (Math.imul(h1, 5) + 0xe6546b64) | 0;
    h2 = (h2 + Math.imul(w, 0x85ebca77)) | 0;
    h2 = (h2 << 13) | (h2 >>> 19);
    h2 = Math.imul(h2, 0x9e3779b1);
  }
  // The last 1-3 bytes, as one more word whose top bytes are zero (the length tells them apart).
  if (i < end) {
    let w = 0;
    for (let shift = 0; i < end; i++, shift += 8) w |= view.getUint8(i) << shift;
    const k = Math.imul(w, 0xcc9e2d51);
    h1 ^= Math.imul((k << 15) | (k >>> 17), 0x1b873593);
    const acc = (h2 + Math.imul(w, 0x165667b1)) | 0;
    h2 = Math.imul((acc << 11) | (acc >>> 21), 0x27d4eb2f);
  }
  out[0] = fmix(h1 ^ (end - start));
  out[1] = fmix(h2 ^ Math.imul(end - start, 0x27d4eb2f));
  // The all-zero key marks an empty slot.
  if (out[0] === EMPTY && out[1] === EMPTY) out[1] = 1;
}

/** murmur3's 32-bit finalizer: every bit of `x` moves every bit of the result (signed). */
export function fmix(x: number): number {
  let h = x;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}

/**
 * Where a key sits in any table, as a fraction of 2^32 (its home slot is this scaled to the
 * table). Both halves mixed: keys whose halves are related (lo a multiple of hi) must still spread.
 */
function position(hi: number, lo: number): number {
  const x = Math.imul(hi ^ Math.imul(lo, 0x85ebca6b), 0x9e3779b1);
  return (x ^ (x >>> 15)) >>> 0;
}

/** The part, of 2^bits, a key's position falls in (the top bits of its position). */
export function partOf(hi: number, lo: number, bits: number): number {
  return bits === 0 ? 0 : position(hi, lo) >>> (32 - bits);
}

/**
 * Storage of `words` zeroed 32-bit words, every page already written. A fresh buffer's pages are
 * mapped on first use; a table's first use of a page is mostly a read (a probe, or MapBatch's
 * touch), which maps the kernel's shared zero page, and the write that follows then faults again
 * to replace it, flushing the old mapping from every core the process runs on: a second fault
 * and an interrupt to the other thread's core, each page. Writing the zeros first faults once per
 * page.
 */
function writtenWords(words: number): Int32Array {
  const storage = new Int32Array(words);
  storage.fill(0);
  return storage;
}

/** Most keys a table holds per slot before it grows. */
const MAX_LOAD = 0.75;

/** Slots for `entries` keys at the load limit (at least 16). */
function slotsFor(entries: number): number {
  return Math.max(16, Math.ceil(entries / MAX_LOAD) + 1);
}

/**
 * A map from 64-bit keys, given as two signed 32-bit halves (other numbers are taken modulo
 * 2^32, so unsigned halves name the same keys), to int32 values (a set when values are ignored).
 * Each slot's key halves and value sit next to each other in one array, so a probe touches one
 * cache line instead of three: the big per-round maps are far larger than the CPU caches and are
 * hit in random order. Any number of slots (a key's home slot is its mixed hash scaled to the
 * table, not masked), so a table sized for a known number of keys, or for the union of two, is
 * that size rather than the next power of two: up to half the memory of the largest maps.
 */
export class U64Map {
  /** Slot `i` is `slots[i * stride]` (high key half), `+ 1` (low half), `+ 2` (value). */
  private slots: Int32Array;
  /** 3 with values, 2 for plain sets, which then cost 8 bytes per slot. */
  private readonly stride: number;
  private cap: number;
  private limit: number;
  size = 0;

  /** A map that holds `entries` keys without growing (its load stays at most 3/4). */
  static forEntries(entries: number, withValues = true): U64Map {
    return new U64Map(slotsFor(entries), withValues);
  }

  constructor(initialCapacity = 16, withValues = true) {
    this.stride = withValues ? 3 : 2;
    this.cap = Math.max(16, Math.ceil(initialCapacity));
    this.slots = writtenWords(this.cap * this.stride);
    this.limit = Math.floor(this.cap * MAX_LOAD);
  }

  /** Offset in `slots` of the key's slot, or of the empty slot where it would go. */
  private find(hi: number, lo: number): number {
    const slots = this.slots;
    const stride = this.stride;
    const cap = this.cap;
    // The high bits of the key's position scaled to the table (exact: below 2^53).
    let i = ((position(hi, lo) * cap) / 4294967296) | 0;
    for (;;) {
      const at = i * stride;
      const h = slots[at] as number;
      const l = slots[at + 1] as number;
      if ((h === hi && l === lo) || (h === EMPTY && l === EMPTY)) return at;
      i++;
      if (i === cap) i = 0;
    }
  }

  /**
   * Slots in the table now. It grows by half when 3/4 full: a map that ends just past a doubling
   * step held under 40% of its slots, and the rounds' maps are most of a summary's memory.
   */
  get capacity(): number {
    return this.cap;
  }

  /** Bytes of storage its keys need at the load limit. */
  get neededBytes(): number {
    return slotsFor(this.size) * this.stride * 4;
  }

  /** Bytes of storage beyond what its keys need (room it has not used yet). */
  get unusedBytes(): number {
    return Math.max(0, this.cap * this.stride * 4 - this.neededBytes);
  }

  /** Bytes of storage `entries` keys need at the load limit (see forEntries). */
  static bytesFor(entries: number, withValues = true): number {
    return slotsFor(entries) * (withValues ? 12 : 8);
  }

  /**
   * The first word of the key's home slot. Reading it asks the CPU for the slot's cache line
   * without waiting on anything else (see MapBatch), so the update that follows finds it in cache.
   */
  touch(hiKey: number, loKey: number): number {
    const i = ((position(hiKey | 0, loKey | 0) * this.cap) / 4294967296) | 0;
    return this.slots[i * this.stride] as number;
  }

  has(hiKey: number, loKey: number): boolean {
    const hi = hiKey | 0;
    const lo = loKey | 0;
    const at = this.find(hi, lo);
    return this.slots[at] === hi && this.slots[at + 1] === lo;
  }

  get(hiKey: number, loKey: number, fallback: number): number {
    const hi = hiKey | 0;
    const lo = loKey | 0;
    const at = this.find(hi, lo);
    return this.slots[at] === hi && this.slots[at + 1] === lo && this.stride === 3
      ? (this.slots[at + 2] as number)
      : fallback;
  }

  /** Adds the key with `value` when absent; returns true when it was added. */
  add(hiKey: number, loKey: number, value = 0): boolean {
    const hi = hiKey | 0;
    const lo = loKey | 0;
    const at = this.find(hi, lo);
    const slots = this.slots;
    if (slots[at] === hi && slots[at + 1] === lo) return false;
    slots[at] = hi;
    slots[at + 1] = lo;
    if (this.stride === 3) slots[at + 2] = value;
    this.size++;
    if (this.size > this.limit) this.rehash(Math.ceil(this.cap * 1.5));
    return true;
  }

  /** Sets the value to min(current, value), adding the key when absent. */
  addMin(hiKey: number, loKey: number, value: number): void {
    const hi = hiKey | 0;
    const lo = loKey | 0;
    if (this.stride !== 3) {
      this.add(hi, lo);
      return;
    }
    const at = this.find(hi, lo);
    const slots = this.slots;
    if (slots[at] === hi && slots[at + 1] === lo) {
      if (value < (slots[at + 2] as number)) slots[at + 2] = value;
      return;
    }
    slots[at] = hi;
    slots[at + 1] = lo;
    slots[at + 2] = value;
    this.size++;
    if (this.size > this.limit) this.rehash(Math.ceil(this.cap * 1.5));
  }

  /** The table's storage, for handing a map to another thread (its buffer can be transferred). */
  toState(): U64MapState {
    return { slots: this.slots, stride: this.stride, size: this.size };
  }

  /** A map over storage made by `toState` (in this or another thread); the storage is adopted. */
  static fromState(state: U64MapState): U64Map {
    const map = new U64Map(16, state.stride === 3);
    map.slots = state.slots;
    map.cap = state.slots.length / state.stride;
    map.limit = Math.floor(map.cap * MAX_LOAD);
    map.size = state.size;
    return map;
  }

  /**
   * Adds every key of `other` (which may hand its storage over: do not use it afterwards); with
   * values, a key in both keeps the smaller value (the maps hold earliest times), so merging
   * partial maps gives the map of the whole, in any order. The result is sized for the union at
   * once: one table of the right size, not growth steps on the way.
   */
  mergeMin(other: U64Map): void {
    const need = slotsFor(this.size + other.size);
    let from = other.slots;
    let fromStride = other.stride;
    if (
      this.stride === other.stride &&
      other.cap >= need &&
      (other.cap > this.cap || this.size === 0)
    ) {
      // The other's storage is large enough for both: keep it and add this map's keys to it (an
      // empty map, a round the other thread alone saw, takes it as it is).
      from = this.slots;
      fromStride = this.stride;
      this.slots = other.slots;
      this.cap = other.cap;
      this.limit = other.limit;
      this.size = other.size;
    } else if (this.cap < need) {
      this.rehash(need);
    }
    for (let at = 0; at < from.length; at += fromStride) {
      const h = from[at] as number;
      const l = from[at + 1] as number;
      if (h === EMPTY && l === EMPTY) continue;
      this.addMin(h, l, fromStride === 3 ? (from[at + 2] as number) : 0);
    }
  }

  /** Empties the map, keeping its storage (a set reused across passes allocates once). */
  clear(): void {
    this.slots.fill(0);
    this.size = 0;
  }

  /**
   * Adds to `set`, halves swapped, this map's keys in part `part` of 2^`bits` (see partOf). Keys
   * sit in the order of their positions (plus the probe runs), so the keys of one part are read
   * from one run of slots: counting over parts reads each map once, not once per part. The
   * halves are swapped because the keys of one part share the top bits of their position, so
   * `set` would put them all in one run of its own slots; the position of the swapped key does
   * not depend on the part (lo is uniform whatever hi ^ lo * c, which sets the part, is).
   */
  addPartTo(set: U64Map, part: number, bits: number): void {
    const slots = this.slots;
    const stride = this.stride;
    const cap = this.cap;
    const parts = 2 ** bits;
    // A key of the part has its home slot in [first, last]; it sits there or further on in its
    // probe run, which ends at the first empty slot (wrapping past the end of the table).
    const first = Math.floor((part * cap) / parts);
    const last = Math.floor(((part + 1) * cap) / parts);
    let wrapped = false;
    for (let i = first; ; i++) {
      if (i === cap) {
        i = 0;
        wrapped = true;
      }
      const at = i * stride;
      const h = slots[at] as number;
      const l = slots[at + 1] as number;
      if (h === EMPTY && l === EMPTY) {
        if (wrapped || i > last) return;
      } else if (partOf(h, l, bits) === part) set.add(l, h);
    }
  }

  forEach(fn: (hi: number, lo: number, value: number) => void): void {
    const slots = this.slots;
    const stride = this.stride;
    for (let at = 0; at < slots.length; at += stride) {
      const h = slots[at] as number;
      const l = slots[at + 1] as number;
      if (h !== EMPTY || l !== EMPTY) fn(h, l, stride === 3 ? (slots[at + 2] as number) : 0);
    }
  }

  private rehash(cap: number): void {
    const old = this.slots;
    const stride = this.stride;
    this.cap = cap;
    this.limit = Math.floor(cap * MAX_LOAD);
    this.slots = writtenWords(cap * stride);
    for (let j = 0; j < old.length; j += stride) {
      const h = old[j] as number;
      const l = old[j + 1] as number;
      if (h === EMPTY && l === EMPTY) continue;
      const at = this.find(h, l);
      this.slots[at] = h;
      this.slots[at + 1] = l;
      if (stride === 3) this.slots[at + 2] = old[j + 2] as number;
    }
  }
}
