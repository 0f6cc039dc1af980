import {
  COL,
  CONTROL_GROUP,
  checkKeyLength,
  checkTime,
  MAX_KEY_BYTES,
} from "./campaign-columns.js";
import { type CsvRecord, fieldText } from "./csv-scanner.js";
import { AnalysisError } from "./errors.js";
import { U64Map } from "./hash-table.js";
import { safeText } from "./safe-text.js";

/**
 * Send rounds (task_id, scheduled_at, group) and their accumulators, found from a row's raw bytes
 * by a hash of the three fields: the same cost on every row whatever the file's order (a "same as
 * the previous row" shortcut missed on almost every row of a file sorted by time, where groups
 * and rounds interleave).
 */

/** A service export holds at most 120 rounds; far more means a hostile or unrelated file. */
export const MAX_ROUNDS = 1_000;

export interface RoundAcc {
  /** the fields as written (the key; task_id and group below are cleaned for showing) */
  rawTask: string;
  rawGroup: string;
  task_id: string;
  scheduled_at: string;
  group: string;
  /** the control group (대조군): its conversion rows' revenue is kept apart */
  isControl: boolean;
  sent: number;
  received: number;
  failed: number;
  control: number;
  opens: number;
  clicks: number;
  conversions: number;
  /** user -> receipt time (seconds); its size is the round's received users */
  receipts: U64Map;
  /** user -> first open time (seconds); its size is the round's open users */
  firstOpen: U64Map;
  clickUsers: U64Map;
  conversionUsers: U64Map;
  controlUsers: U64Map;
  /** channel ids (the tally's channel table) */
  channels: Set<number>;
}

/** Initial sizes of a round's user maps, in entries (see U64Map.forEntries). */
export interface RoundSizes {
  receipts: number;
  firstOpen: number;
  clicks: number;
  conversions: number;
}

export function newRound(
  task: string,
  scheduled: string,
  group: string,
  sizes: RoundSizes,
): RoundAcc {
  const shownGroup = safeText(group, MAX_KEY_BYTES);
  return {
    rawTask: task,
    rawGroup: group,
    task_id: safeText(task, MAX_KEY_BYTES),
    scheduled_at: scheduled,
    group: shownGroup,
    // The cleaned name, as the finish step compares it (control_conversions).
    isControl: shownGroup === CONTROL_GROUP,
    sent: 0,
    received: 0,
    failed: 0,
    control: 0,
    opens: 0,
    clicks: 0,
    conversions: 0,
    receipts: U64Map.forEntries(sizes.receipts),
    firstOpen: U64Map.forEntries(sizes.firstOpen),
    clickUsers: U64Map.forEntries(sizes.clicks, false),
    conversionUsers: U64Map.forEntries(sizes.conversions, false),
    controlUsers: new U64Map(16, false),
    channels: new Set(),
  };
}

/** Slots of the hash table (a power of two, four times MAX_ROUNDS and more). */
const SLOTS = 4096;

function mix(h: number, buf: Uint8Array, s: number, e: number): number {
  let x = Math.imul(h ^ (e - s), 0x01000193);
  for (let i = s; i < e; i++) x = Math.imul(x ^ (buf[i] as number), 0x01000193);
  return x;
}

interface Entry {
  round: RoundAcc;
  /** the three fields' decoded UTF-8 bytes, one after the other */
  bytes: Buffer;
  len0: number;
  len1: number;
}

export class RoundTable {
  readonly rounds: RoundAcc[] = [];
  private readonly entries: Entry[] = [];
  /** slot -> entry index + 1 (0: empty) */
  private readonly slots = new Int32Array(SLOTS);

  constructor(private readonly sizesFor: (previous: RoundAcc | undefined) => RoundSizes) {}

  /** The row's round, created on first sight (its key fields then checked). */
  lookup(rec: CsvRecord): RoundAcc {
    if (
      rec.escaped[COL.task] === 1 ||
      rec.escaped[COL.scheduled] === 1 ||
      rec.escaped[COL.group] === 1
    ) {
      return this.lookupDecoded(rec);
    }
    const buf = rec.buf;
    const s0 = rec.starts[COL.task] as number;
    const e0 = rec.ends[COL.task] as number;
    const s1 = rec.starts[COL.scheduled] as number;
    const e1 = rec.ends[COL.scheduled] as number;
    const s2 = rec.starts[COL.group] as number;
    const e2 = rec.ends[COL.group] as number;
    const h = mix(mix(mix(0x811c9dc5, buf, s0, e0), buf, s1, e1), buf, s2, e2);
    const len0 = e0 - s0;
    const len1 = e1 - s1;
    const total = len0 + len1 + (e2 - s2);
    let slot = (h ^ (h >>> 15)) & (SLOTS - 1);
    for (;;) {
      const at = this.slots[slot] as number;
      if (at === 0) break;
      const entry = this.entries[at - 1] as Entry;
      const key = entry.bytes;
      if (key.length === total && entry.len0 === len0 && entry.len1 === len1) {
        let k = 0;
        let i = s0;
        while (i < e0 && buf[i] === key[k]) {
          i++;
          k++;
        }
        if (i === e0) {
          i = s1;
          while (i < e1 && buf[i] === key[k]) {
            i++;
            k++;
          }
          if (i === e1) {
            i = s2;
            while (i < e2 && buf[i] === key[k]) {
              i++;
              k++;
            }
            if (i === e2) return entry.round;
          }
        }
      }
      slot = (slot + 1) & (SLOTS - 1);
    }
    return this.lookupDecoded(rec);
  }

  /** Rows whose key fields hold doubled quotes, and first sightings: by decoded text. */
  private lookupDecoded(rec: CsvRecord): RoundAcc {
    checkKeyLength(rec, COL.task, "task_id");
    checkKeyLength(rec, COL.group, "group");
    checkTime(rec, COL.scheduled, "scheduled_at");
    const task = fieldText(rec, COL.task);
    const scheduled = fieldText(rec, COL.scheduled);
    const group = fieldText(rec, COL.group);
    const found = this.find(task, scheduled, group);
    if (found !== undefined) return found;
    if (this.rounds.length >= MAX_ROUNDS) {
      throw new AnalysisError(
        `Line ${rec.line}: more than ${MAX_ROUNDS} distinct send rounds (task_id, scheduled_at, group); a service export holds at most 120 rounds.`,
        "not_campaign_export",
      );
    }
    return this.add(task, scheduled, group);
  }

  /** The round with these decoded fields, if any. */
  find(task: string, scheduled: string, group: string): RoundAcc | undefined {
    const t = Buffer.from(task, "utf8");
    const s = Buffer.from(scheduled, "utf8");
    const g = Buffer.from(group, "utf8");
    const bytes = Buffer.concat([t, s, g]);
    let slot = this.slotOf(bytes, t.length, s.length);
    for (;;) {
      const at = this.slots[slot] as number;
      if (at === 0) return undefined;
      const entry = this.entries[at - 1] as Entry;
      if (entry.len0 === t.length && entry.len1 === s.length && entry.bytes.equals(bytes)) {
        return entry.round;
      }
      slot = (slot + 1) & (SLOTS - 1);
    }
  }

  /** Adds a round (not yet in the table) with these decoded fields. */
  add(task: string, scheduled: string, group: string): RoundAcc {
    const t = Buffer.from(task, "utf8");
    const s = Buffer.from(scheduled, "utf8");
    const bytes = Buffer.concat([t, s, Buffer.from(group, "utf8")]);
    const round = newRound(task, scheduled, group, this.sizesFor(this.rounds.at(-1)));
    this.entries.push({ round, bytes, len0: t.length, len1: s.length });
    this.rounds.push(round);
    let slot = this.slotOf(bytes, t.length, s.length);
    while (this.slots[slot] !== 0) slot = (slot + 1) & (SLOTS - 1);
    this.slots[slot] = this.entries.length;
    return round;
  }

  private slotOf(bytes: Buffer, len0: number, len1: number): number {
    const h = mix(
      mix(mix(0x811c9dc5, bytes, 0, len0), bytes, len0, len0 + len1),
      bytes,
      len0 + len1,
      bytes.length,
    );
    return (h ^ (h >>> 15)) & (SLOTS - 1);
  }
}
