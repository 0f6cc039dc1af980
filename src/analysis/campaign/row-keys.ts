import type { Interned } from "../csv/intern-table.js";
import type { RoundAcc } from "./round-hash-table.js";

/**
 * A row's round and event type at once, from the hash of its first four fields (task_id,
 * scheduled_at, group, event_type) that the scanner's kernel computes as it reads the record
 * (CsvRecord.keyHash): a direct-mapped table from that hash, filled on a miss from the lookups by
 * bytes, answers with two compares what those answer by comparing some 50 bytes. A file holds few
 * such pairs (rounds times event types, about 200 in a large export), far fewer than slots, so
 * it hits on nearly every row whatever the rows' order. Like user ids (csv/hash-table.ts), a key is
 * its 64-bit hash; rows the kernel did not read (a quoted field) are looked up by their bytes.
 */

/** The key fields: the first four columns of a campaign export. */
export const ROW_KEY_FIELDS = 4;
const SLOTS = 1024;

export interface RowKey {
  round: RoundAcc;
  type: Interned;
}

export class RowKeys {
  private readonly lo = new Int32Array(SLOTS);
  private readonly hi = new Int32Array(SLOTS);
  private readonly keys: (RowKey | undefined)[] = new Array<RowKey | undefined>(SLOTS).fill(
    undefined,
  );

  /** The round and event type of a row whose key hash is `hash` ([low, high] halves), if known. */
  get(hash: Int32Array): RowKey | undefined {
    const lo = hash[0] as number;
    const slot = lo & (SLOTS - 1);
    const key = this.keys[slot];
    return key !== undefined && this.lo[slot] === lo && this.hi[slot] === hash[1] ? key : undefined;
  }

  set(hash: Int32Array, round: RoundAcc, type: Interned): void {
    const lo = hash[0] as number;
    const slot = lo & (SLOTS - 1);
    this.lo[slot] = lo;
    this.hi[slot] = hash[1] as number;
    this.keys[slot] = { round, type };
  }
}
