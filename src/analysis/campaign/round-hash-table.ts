import { EXPORT_MAX_ROUNDS } from "../../api/limits.js";
import { fmix, U64Map } from "../csv/hash-table.js";
import { type CsvRecord, fieldText, sameBytesAt } from "../csv/scanner.js";
import { AnalysisError } from "../errors.js";
import { safeText } from "../safe-text.js";
import { COL, CONTROL_GROUP, checkKeyLength, checkTime, MAX_KEY_BYTES } from "./columns.js";

/**
 * Send rounds (task_id, scheduled_at, group) and their accumulators, found from a row's raw bytes
 * by a 64-bit hash of the three fields: the same cost on every row whatever the file's order (a
 * "same as the previous row" shortcut missed on almost every row of a file sorted by time, where
 * groups and rounds interleave). Like user ids (csv/hash-table.ts), a round is its hash: two of at
 * most 1,000 rounds collide with probability below 1e-13.
 */

/** A service export holds at most EXPORT_MAX_ROUNDS; far more means a hostile or unrelated file. */
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
  /** the id last added to `channels`: most rows of a round repeat it, and a Set.add costs more */
  lastChannel: number;
}

/** Initial sizes of a round's user maps, in entries (see U64Map.forEntries). */
export interface RoundSizes {
  receipts: number;
  firstOpen: number;
  clicks: number;
  conversions: number;
  control: number;
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
    controlUsers: U64Map.forEntries(sizes.control, false),
    channels: new Set(),
    lastChannel: -1,
  };
}

/**
 * 64-bit hash of three byte ranges (each one's length mixed in, so bytes cannot move between
 * fields), into `out`. Written out, not looped over ranges: it runs on every row.
 */
function hashKey(
  buf: Uint8Array,
  s0: number,
  e0: number,
  s1: number,
  e1: number,
  s2: number,
  e2: number,
  out: Int32Array,
): void {
  let h1 = 0x811c9dc5 ^ (e0 - s0);
  let h2 = 0x9747b28c ^ Math.imul(e1 - s1, 0x85ebca6b) ^ ((e2 - s2) << 16);
  for (let i = s0; i < e0; i++) {
    const b = buf[i] as number;
    h1 = Math.imul(h1 ^ b, 0x01000193);
    h2 = Math.imul(h2 ^ b, 0x5bd1e995);
  }
  h1 = Math.imul(h1 ^ 0x100, 0x01000193);
  for (let i = s1; i < e1; i++) {
    const b = buf[i] as number;
    h1 = Math.imul(h1 ^ b, 0x01000193);
    h2 = Math.imul(h2 ^ b, 0x5bd1e995);
  }
  h1 = Math.imul(h1 ^ 0x101, 0x01000193);
  for (let i = s2; i < e2; i++) {
    const b = buf[i] as number;
    h1 = Math.imul(h1 ^ b, 0x01000193);
    h2 = Math.imul(h2 ^ b, 0x5bd1e995);
  }
  out[0] = fmix(h1);
  out[1] = fmix(h2 ^ (h2 >>> 13));
  if (out[0] === 0 && out[1] === 0) out[1] = 1;
}

const CACHE_SLOTS = 256;

interface CachedKey {
  /** the key fields' bytes one after the other, and where the first two end */
  key: Uint8Array;
  taskEnd: number;
  scheduledEnd: number;
  /**
   * The fields as an unquoted row holds them, `task,scheduled,group`, to compare with a row's
   * bytes in 4-byte words; null when a field holds a byte that only a quoted field can (a comma
   * would make the split ambiguous).
   */
  span: DataView | null;
  /** its length (a DataView's byteLength is a call, not a field load) */
  spanLength: number;
  round: RoundAcc;
}

function cachedKeyOf(round: RoundAcc): CachedKey {
  const task = Buffer.from(round.rawTask, "utf8");
  const scheduled = Buffer.from(round.scheduled_at, "utf8");
  const group = Buffer.from(round.rawGroup, "utf8");
  const key = new Uint8Array(Buffer.concat([task, scheduled, group]));
  const comma = Buffer.from(",");
  const unquotable = !/[",\r\n]/.test(round.rawTask + round.scheduled_at + round.rawGroup);
  const span = unquotable
    ? new DataView(new Uint8Array(Buffer.concat([task, comma, scheduled, comma, group])).buffer)
    : null;
  return {
    key,
    taskEnd: task.length,
    scheduledEnd: task.length + scheduled.length,
    span,
    spanLength: span === null ? -1 : span.byteLength,
    round,
  };
}

function sameBytes(
  buf: Uint8Array,
  s: number,
  e: number,
  key: Uint8Array,
  ks: number,
  ke: number,
): boolean {
  if (e - s !== ke - ks) return false;
  for (let k = 0; k < e - s; k++) if (buf[s + k] !== key[ks + k]) return false;
  return true;
}

export class RoundTable {
  readonly rounds: RoundAcc[] = [];
  /** key hash -> index in `rounds` */
  private readonly index = new U64Map(4096);
  private readonly hash = new Int32Array(2);

  /** `sizesFor` gets the rounds so far and the new round's kind (control group or not). */
  constructor(
    private readonly sizesFor: (rounds: readonly RoundAcc[], isControl: boolean) => RoundSizes,
  ) {}

  /**
   * A direct-mapped cache in front of the hash (slot: a few bytes and the lengths of the key
   * fields), checked by comparing the key's bytes, which costs less than hashing them. It hits
   * on every row whatever the order (a file holds few rounds, far fewer than slots), and a miss
   * only falls back to the hash.
   */
  private readonly cache: (CachedKey | undefined)[] = new Array<CachedKey | undefined>(
    CACHE_SLOTS,
  ).fill(undefined);

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
    const ts = rec.starts[COL.task] as number;
    const te = rec.ends[COL.task] as number;
    const ss = rec.starts[COL.scheduled] as number;
    const se = rec.ends[COL.scheduled] as number;
    const gs = rec.starts[COL.group] as number;
    const ge = rec.ends[COL.group] as number;
    const slot =
      ((te - ts) * 7 +
        (ge - gs) * 131 +
        (te > ts ? (buf[te - 1] as number) * 31 + (buf[ts + ((te - ts) >> 1)] as number) : 0) +
        (se > ss ? (buf[se - 4] as number) * 17 + (buf[se - 7] as number) * 5 : 0) +
        (ge > gs ? (buf[ge - 1] as number) * 3 : 0)) &
      (CACHE_SLOTS - 1);
    const cached = this.cache[slot];
    if (cached !== undefined) {
      if (ss === te + 1 && gs === se + 1) {
        // None of the three is quoted (a quote would stand between a field's end and the next
        // one's start): they are one span of the row, compared at once.
        const span = cached.span;
        if (
          span !== null &&
          cached.spanLength === ge - ts &&
          sameBytesAt(rec.view, ts, span, ge - ts)
        ) {
          return cached.round;
        }
      } else if (
        sameBytes(buf, ts, te, cached.key, 0, cached.taskEnd) &&
        sameBytes(buf, ss, se, cached.key, cached.taskEnd, cached.scheduledEnd) &&
        sameBytes(buf, gs, ge, cached.key, cached.scheduledEnd, cached.key.length)
      ) {
        return cached.round;
      }
    }
    const round = this.lookupHashed(rec);
    this.cache[slot] = cachedKeyOf(round);
    return round;
  }

  /** The round by the hash of its key fields' bytes (none of them escaped). */
  private lookupHashed(rec: CsvRecord): RoundAcc {
    const hash = this.hash;
    hashKey(
      rec.buf,
      rec.starts[COL.task] as number,
      rec.ends[COL.task] as number,
      rec.starts[COL.scheduled] as number,
      rec.ends[COL.scheduled] as number,
      rec.starts[COL.group] as number,
      rec.ends[COL.group] as number,
      hash,
    );
    const at = this.index.get(hash[0] as number, hash[1] as number, -1);
    return at >= 0 ? (this.rounds[at] as RoundAcc) : this.lookupDecoded(rec);
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
        `Line ${rec.line}: more than ${MAX_ROUNDS} distinct send rounds (task_id, scheduled_at, group); a service export holds at most ${EXPORT_MAX_ROUNDS} rounds.`,
        "not_campaign_export",
      );
    }
    return this.add(task, scheduled, group);
  }

  /** The key hash of decoded fields: the same as `lookup` computes from their bytes in a row. */
  private hashText(task: string, scheduled: string, group: string): Int32Array {
    const t = Buffer.from(task, "utf8");
    const s = Buffer.from(scheduled, "utf8");
    const bytes = Buffer.concat([t, s, Buffer.from(group, "utf8")]);
    const n = t.length + s.length;
    hashKey(bytes, 0, t.length, t.length, n, n, bytes.length, this.hash);
    return this.hash;
  }

  /** The round with these decoded fields, if any. */
  find(task: string, scheduled: string, group: string): RoundAcc | undefined {
    const hash = this.hashText(task, scheduled, group);
    const at = this.index.get(hash[0] as number, hash[1] as number, -1);
    return at >= 0 ? this.rounds[at] : undefined;
  }

  /**
   * Adds a round (not yet in the table) with these decoded fields; its maps sized by `sizesFor`,
   * or `sizes` (a round merged from another thread's tally takes over that one's maps).
   */
  add(task: string, scheduled: string, group: string, sizes?: RoundSizes): RoundAcc {
    const isControl = safeText(group, MAX_KEY_BYTES) === CONTROL_GROUP;
    const round = newRound(task, scheduled, group, sizes ?? this.sizesFor(this.rounds, isControl));
    const hash = this.hashText(task, scheduled, group);
    this.index.add(hash[0] as number, hash[1] as number, this.rounds.length);
    this.rounds.push(round);
    return round;
  }
}
