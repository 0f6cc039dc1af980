import type { U64Map } from "./hash-table.js";

/**
 * Map updates gathered over many rows and applied together. The rounds' user maps are far larger
 * than the CPU caches and each update lands on a random slot: applied one per row, each waits
 * for its cache miss with nothing else to do (the next row's work depends on the scanner). A
 * batch first reads the home slot of every update (independent loads the CPU overlaps, tens of
 * misses in flight at once) and then applies them to slots that are now in cache. The maps'
 * contents do not depend on when an update is applied (earliest times and set membership), so
 * deferring them changes no figure; `flush` before the maps are read. What it saves:
 * bench/RESULTS.md, "What the performance code is worth".
 */
export const MAP_BATCH = 512;

export class MapBatch {
  private readonly maps: (U64Map | undefined)[];
  private readonly keys: Int32Array;
  private count = 0;
  /** Where the touched words go, so the reads are not optimised away. */
  private sink = 0;

  constructor(private readonly size = MAP_BATCH) {
    this.maps = new Array<U64Map | undefined>(size).fill(undefined);
    this.keys = new Int32Array(size * 3);
  }

  /** `map.addMin(hi, lo, value)`, soon (a set ignores the value). */
  addMin(map: U64Map, hi: number, lo: number, value: number): void {
    const n = this.count;
    const k = n * 3;
    this.maps[n] = map;
    this.keys[k] = hi;
    this.keys[k + 1] = lo;
    this.keys[k + 2] = value;
    this.count = n + 1;
    if (n + 1 === this.size) this.flush();
  }

  /** Applies every gathered update. */
  flush(): void {
    const { maps, keys } = this;
    const n = this.count;
    let sink = this.sink;
    for (let j = 0; j < n; j++) {
      sink ^= (maps[j] as U64Map).touch(keys[j * 3] as number, keys[j * 3 + 1] as number);
    }
    for (let j = 0; j < n; j++) {
      const k = j * 3;
      (maps[j] as U64Map).addMin(keys[k] as number, keys[k + 1] as number, keys[k + 2] as number);
    }
    this.sink = sink;
    this.count = 0;
  }
}
