import { U64Map } from "./hash-table.js";
import type { RoundAcc } from "./round-table.js";

/** Keys counted per pass of `distinctOver`: its set stays a few MB whatever the file. */
const KEYS_PER_PASS = 1 << 19;

/**
 * The number of distinct users over all rounds of one of their maps. The file-wide counts are
 * made here, once, rather than in file-wide sets beside the rounds' maps on every row: the
 * threads then hold and merge only the rounds' maps. The keys are counted in passes over parts
 * of the key space (by the high key half's low bits), so the set of a pass stays small.
 */
export function distinctOver(rounds: readonly RoundAcc[], mapOf: (r: RoundAcc) => U64Map): number {
  let total = 0;
  for (const r of rounds) total += mapOf(r).size;
  let parts = 1;
  while (total / parts > KEYS_PER_PASS) parts *= 2;
  let distinct = 0;
  for (let part = 0; part < parts; part++) {
    const seen = U64Map.forEntries(Math.ceil(total / parts), false);
    for (const r of rounds) {
      // The slots read directly: a callback per key cost more than the set itself.
      const { slots, stride } = mapOf(r).toState();
      for (let at = 0; at < slots.length; at += stride) {
        const hi = slots[at] as number;
        const lo = slots[at + 1] as number;
        if ((hi !== 0 || lo !== 0) && (hi & (parts - 1)) === part) seen.add(hi, lo);
      }
    }
    distinct += seen.size;
  }
  return distinct;
}
