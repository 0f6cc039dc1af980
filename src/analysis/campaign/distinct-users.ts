import { U64Map } from "../csv/hash-table.js";

/**
 * Keys counted per part by `distinctOver`: a set sized for ROOM times as many (four slots per
 * key, 0.5 MB) stays in the CPU's cache, where one set for all keys would miss it on every insert,
 * and a quarter full it finds a new key's slot in one or two probes (at 3/4 full, about five).
 */
const KEYS_PER_PART = 1 << 14;
const ROOM = 3;

/**
 * The number of distinct users over all rounds of one of their maps. The file-wide counts are
 * made here, once, rather than in file-wide sets beside the rounds' maps on every row: the
 * threads then hold and merge only the rounds' maps. The keys are counted part by part of their
 * positions (U64Map.addPartTo), in one small set emptied between parts and each map read once.
 */
export function distinctOver<Round>(
  rounds: readonly Round[],
  mapOf: (r: Round) => U64Map,
  keysPerPart = KEYS_PER_PART,
): number {
  let total = 0;
  for (const r of rounds) total += mapOf(r).size;
  let bits = 0;
  while (total / 2 ** bits > keysPerPart) bits++;
  // A part holds about total / 2^bits keys; the set grows if one holds more.
  const seen = U64Map.forEntries(Math.ceil((total / 2 ** bits) * ROOM), false);
  let distinct = 0;
  for (let part = 0; part < 2 ** bits; part++) {
    if (part > 0) seen.clear();
    for (const r of rounds) mapOf(r).addPartTo(seen, part, bits);
    distinct += seen.size;
  }
  return distinct;
}
