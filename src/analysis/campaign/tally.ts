import { U64Map, type U64MapState } from "../csv/hash-table.js";
import { InternTable } from "../csv/intern-table.js";
import { MapBatch } from "../csv/map-batch.js";
import { AnalysisError } from "../errors.js";
import { mergeRevenue, newRevenueAcc, type RevenueAcc } from "./revenue.js";
import { MAX_ROUNDS, type RoundAcc, type RoundSizes, RoundTable } from "./round-hash-table.js";

/**
 * The row pass's accumulators over a campaign CSV (or one byte range of it), and how the tallies
 * of several ranges become the whole file's: counts add, user maps are unioned (earliest times
 * kept), named things (rounds, event types, channels, codes) are matched by name. Every figure is
 * independent of the order the rows came in, so a file split between threads, or its rows in any
 * order, gives the same tally.
 */

const MAX_EVENT_TYPES = 1_000;
const MAX_CHANNELS = 200;
export const MAX_ERROR_CODES = 1_000;

export interface ChannelAcc {
  sent: number;
  received: number;
  failed: number;
}

export interface ErrorCodeAcc {
  count: number;
  /** the smallest message seen with the code (by its bytes in the file), made safe to show */
  sample: string;
  /** its raw field bytes, to compare the next message with */
  sampleBytes: Uint8Array | null;
}

export interface CampaignTally {
  rows: number;
  unidentified: number;
  roundTable: RoundTable;
  /** the rounds' user map updates not yet applied: `settleTally` before reading the maps */
  mapBatch: MapBatch;
  /** the rounds in the order first seen (roundTable.rounds) */
  rounds: RoundAcc[];
  eventTypes: InternTable;
  eventRoles: number[];
  eventCounts: number[];
  channels: InternTable;
  channelAcc: ChannelAcc[];
  errorCodes: Map<string, ErrorCodeAcc>;
  revenue: RevenueAcc;
  opensByHour: number[];
  /** a cap that keeps only the first N of something was reached */
  errorCodesCapped: boolean;
  headerSeen: boolean;
  /** a row with the wrong number of columns, reported when the next row (or the end) comes */
  pendingBadRecord: { line: number; count: number } | undefined;
  /** the last row's line, and whether its last field is JSON visibly cut short */
  lastLine: number;
  lastJsonCut: boolean;
  /** notes for the reader (a file that may be truncated) */
  warnings: string[];
}

/** A new round's maps hold this much more than the largest of its kind before they grow. */
const ROUND_ROOM = 1.1;

/**
 * Storage the rounds' maps may hold unused, made when rounds are sized from the largest of their
 * kind, beyond the storage their keys need: at least this, or as much as the keys need. Without
 * a bound, one large round followed by many small ones (a big send, then small follow-ups) would
 * reserve the large round's size for each: storage written when made (see csv/hash-table.ts), and
 * read again when the users are counted (which reads every slot).
 */
const UNUSED_RESERVE_BYTES = 8 << 20;

const SMALLEST: RoundSizes = { receipts: 0, firstOpen: 0, clicks: 0, conversions: 0, control: 0 };

/**
 * New rounds' sizes. The first round of each kind (control group or not) is sized from the file;
 * each later one from the largest of its kind so far, with room, when the storage that reserves
 * stays within UNUSED_RESERVE_BYTES or what the keys need, and the smallest otherwise. The rounds
 * are looked over again only after 1/32 more of them were made (a file may hold a thousand, and
 * a look at every new round would read them all each time); meanwhile the storage of the
 * rounds made since counts as unused, so the bound holds between looks too.
 */
class RoundSizer {
  private looked = 0;
  private unused = 0;
  private needed = 0;
  private readonly largest: [RoundSizes, RoundSizes] = [{ ...SMALLEST }, { ...SMALLEST }];
  private readonly seen = [false, false];

  constructor(private readonly firstSizes: (isControl: boolean) => RoundSizes) {}

  sizesFor(rounds: readonly RoundAcc[], isControl: boolean): RoundSizes {
    const kind = isControl ? 1 : 0;
    let sizes: RoundSizes;
    if (!this.seen[kind]) {
      this.seen[kind] = true;
      sizes = this.firstSizes(isControl);
    } else {
      if (rounds.length >= this.looked + Math.max(1, rounds.length >> 5)) this.look(rounds);
      const most = this.largest[kind];
      const room = (n: number): number => Math.ceil(n * ROUND_ROOM);
      sizes = {
        receipts: room(most.receipts),
        firstOpen: room(most.firstOpen),
        clicks: room(most.clicks),
        conversions: room(most.conversions),
        control: room(most.control),
      };
      if (this.unused + bytesOf(sizes) > Math.max(UNUSED_RESERVE_BYTES, this.needed)) {
        sizes = SMALLEST;
      }
    }
    this.unused += bytesOf(sizes);
    return sizes;
  }

  /** The rounds' unused and needed storage, and the largest maps of each kind. */
  private look(rounds: readonly RoundAcc[]): void {
    this.looked = rounds.length;
    this.unused = 0;
    this.needed = 0;
    this.largest[0] = { ...SMALLEST };
    this.largest[1] = { ...SMALLEST };
    for (const r of rounds) {
      this.unused +=
        r.receipts.unusedBytes +
        r.firstOpen.unusedBytes +
        r.clickUsers.unusedBytes +
        r.conversionUsers.unusedBytes +
        r.controlUsers.unusedBytes;
      this.needed +=
        r.receipts.neededBytes +
        r.firstOpen.neededBytes +
        r.clickUsers.neededBytes +
        r.conversionUsers.neededBytes +
        r.controlUsers.neededBytes;
      const most = this.largest[r.isControl ? 1 : 0];
      most.receipts = Math.max(most.receipts, r.receipts.size);
      most.firstOpen = Math.max(most.firstOpen, r.firstOpen.size);
      most.clicks = Math.max(most.clicks, r.clickUsers.size);
      most.conversions = Math.max(most.conversions, r.conversionUsers.size);
      most.control = Math.max(most.control, r.controlUsers.size);
    }
  }
}

/** Bytes `sizes` takes when its maps are made. */
function bytesOf(sizes: RoundSizes): number {
  return (
    U64Map.bytesFor(sizes.receipts) +
    U64Map.bytesFor(sizes.firstOpen) +
    U64Map.bytesFor(sizes.clicks, false) +
    U64Map.bytesFor(sizes.conversions, false) +
    U64Map.bytesFor(sizes.control, false)
  );
}

/** A tally for `bytes` of CSV, its maps sized from that. */
export function newTally(bytes: number): CampaignTally {
  // The first round's maps are sized from the file; each later round's from the largest of
  // its kind so far, with some room (a campaign's send groups are similar, and so are its control
  // groups, which get no messages): they rarely grow, and a file of many small rounds never
  // reserves a large map for each, nor one of a large round and many small ones (RoundSizer).
  // Not from the last round of its kind: in a file by time that one has only begun when the next
  // starts, and a map grown from a few slots leaves behind storage twice its final size, freed
  // only when the GC next runs.
  const firstSizes: RoundSizes = {
    receipts: Math.min(1 << 16, bytes / 4000),
    firstOpen: Math.min(1 << 14, bytes / 16000),
    clicks: 16,
    conversions: 16,
    control: 16,
  };
  const noMessages: RoundSizes = { ...firstSizes, receipts: 0, firstOpen: 0, clicks: 0 };
  const sizer = new RoundSizer((isControl) =>
    isControl ? { ...noMessages, control: Math.min(1 << 14, bytes / 16000) } : firstSizes,
  );
  const roundTable = new RoundTable((rounds, isControl) => sizer.sizesFor(rounds, isControl));
  return {
    rows: 0,
    unidentified: 0,
    roundTable,
    mapBatch: new MapBatch(),
    rounds: roundTable.rounds,
    eventTypes: new InternTable(MAX_EVENT_TYPES, "event_type"),
    eventRoles: [],
    eventCounts: [],
    channels: new InternTable(MAX_CHANNELS, "channel"),
    channelAcc: [],
    errorCodes: new Map(),
    revenue: newRevenueAcc(),
    opensByHour: new Array<number>(24).fill(0),
    errorCodesCapped: false,
    headerSeen: false,
    pendingBadRecord: undefined,
    lastLine: 0,
    lastJsonCut: false,
    warnings: [],
  };
}

/** Applies the rows' pending map updates: the maps are complete afterwards. */
export function settleTally(t: CampaignTally): void {
  t.mapBatch.flush();
}

/** A round as plain data, for another thread. */
export interface RoundPart {
  rawTask: string;
  scheduled: string;
  rawGroup: string;
  counts: [number, number, number, number, number, number, number];
  receipts: U64MapState;
  firstOpen: U64MapState;
  clickUsers: U64MapState;
  conversionUsers: U64MapState;
  controlUsers: U64MapState;
  channels: string[];
}

/** A tally as plain data (structured-clonable): what a worker thread sends back. */
export interface TallyPart {
  rows: number;
  unidentified: number;
  rounds: RoundPart[];
  eventTypes: { name: string; count: number }[];
  channels: { name: string; acc: ChannelAcc }[];
  errorCodes: [string, ErrorCodeAcc][];
  revenue: RevenueAcc;
  opensByHour: number[];
  errorCodesCapped: boolean;
  pendingBadRecord: { line: number; count: number } | undefined;
  lastJsonCut: boolean;
}

/** The tally as plain data, and the buffers to transfer (not copy) with it. */
export function toPart(t: CampaignTally): { part: TallyPart; transfer: ArrayBuffer[] } {
  settleTally(t);
  const transfer: ArrayBuffer[] = [];
  const state = (map: U64Map): U64MapState => {
    const s = map.toState();
    transfer.push(s.slots.buffer as ArrayBuffer);
    return s;
  };
  const channelName = (id: number): string => t.channels.items[id]?.name ?? "";
  const part: TallyPart = {
    rows: t.rows,
    unidentified: t.unidentified,
    rounds: t.rounds.map((r) => ({
      rawTask: r.rawTask,
      scheduled: r.scheduled_at,
      rawGroup: r.rawGroup,
      counts: [r.sent, r.received, r.failed, r.control, r.opens, r.clicks, r.conversions],
      receipts: state(r.receipts),
      firstOpen: state(r.firstOpen),
      clickUsers: state(r.clickUsers),
      conversionUsers: state(r.conversionUsers),
      controlUsers: state(r.controlUsers),
      channels: [...r.channels].map(channelName),
    })),
    eventTypes: t.eventTypes.items.map((item) => ({
      name: item.name,
      count: t.eventCounts[item.id] ?? 0,
    })),
    channels: t.channels.items.map((item) => ({
      name: item.name,
      acc: t.channelAcc[item.id] ?? { sent: 0, received: 0, failed: 0 },
    })),
    errorCodes: [...t.errorCodes.entries()],
    revenue: t.revenue,
    opensByHour: t.opensByHour,
    errorCodesCapped: t.errorCodesCapped,
    pendingBadRecord: t.pendingBadRecord,
    lastJsonCut: t.lastJsonCut,
  };
  return { part, transfer };
}

/** What a merged round's maps are replaced by in its part. */
const MERGED: U64MapState = { slots: new Int32Array(0), stride: 2, size: 0 };

/** Thrown when partial tallies cannot be merged exactly (a cap was reached): read in one pass. */
export class NeedsOnePass extends Error {
  override name = "NeedsOnePass";
}

/**
 * Adds the tally of the range that follows into `t`. The part's maps are read once and can be
 * dropped afterwards. `roleOf` gives an event type's role code (it depends only on the name).
 */
export function mergePart(
  t: CampaignTally,
  part: TallyPart,
  roleCode: (name: string) => number,
): void {
  if (part.errorCodesCapped || part.revenue.capped) throw new NeedsOnePass("a cap was reached");
  settleTally(t);
  const internOrRetry = (table: InternTable, name: string) => {
    try {
      return table.intern(name);
    } catch (error) {
      if (error instanceof AnalysisError) throw new NeedsOnePass(error.message);
      throw error;
    }
  };
  t.rows += part.rows;
  t.unidentified += part.unidentified;
  for (const { name, count } of part.eventTypes) {
    const item = internOrRetry(t.eventTypes, name);
    if (t.eventRoles[item.id] === undefined) t.eventRoles[item.id] = roleCode(name);
    t.eventCounts[item.id] = (t.eventCounts[item.id] ?? 0) + count;
  }
  const channelIds = new Map<string, number>();
  for (const { name, acc } of part.channels) {
    const item = internOrRetry(t.channels, name);
    channelIds.set(name, item.id);
    const into = t.channelAcc[item.id];
    if (into === undefined) t.channelAcc[item.id] = { ...acc };
    else {
      into.sent += acc.sent;
      into.received += acc.received;
      into.failed += acc.failed;
    }
  }
  for (const r of part.rounds) {
    let round = t.roundTable.find(r.rawTask, r.scheduled, r.rawGroup);
    if (round === undefined) {
      if (t.rounds.length >= MAX_ROUNDS) throw new NeedsOnePass("too many rounds");
      // Empty maps: each takes over the part's storage as it is (U64Map.mergeMin). Sized like
      // the largest round, they would be made (and written) only to be dropped: a large round's
      // storage for each of a thousand small ones.
      round = t.roundTable.add(r.rawTask, r.scheduled, r.rawGroup, SMALLEST);
    }
    const [sent, received, failed, control, opens, clicks, conversions] = r.counts;
    round.sent += sent;
    round.received += received;
    round.failed += failed;
    round.control += control;
    round.opens += opens;
    round.clicks += clicks;
    round.conversions += conversions;
    round.receipts.mergeMin(U64Map.fromState(r.receipts));
    round.firstOpen.mergeMin(U64Map.fromState(r.firstOpen));
    round.clickUsers.mergeMin(U64Map.fromState(r.clickUsers));
    round.conversionUsers.mergeMin(U64Map.fromState(r.conversionUsers));
    round.controlUsers.mergeMin(U64Map.fromState(r.controlUsers));
    for (const name of r.channels) round.channels.add(channelIds.get(name) as number);
    // Let go of the part's storage round by round: a collection during the merge can then free
    // the rounds merged so far, instead of all of them waiting for the end (peak memory).
    r.receipts = r.firstOpen = r.clickUsers = r.conversionUsers = r.controlUsers = MERGED;
  }
  for (const [code, e] of part.errorCodes) {
    const into = t.errorCodes.get(code);
    if (into === undefined) {
      if (t.errorCodes.size >= MAX_ERROR_CODES) throw new NeedsOnePass("too many error codes");
      t.errorCodes.set(code, { ...e });
    } else {
      into.count += e.count;
      if (
        e.sampleBytes !== null &&
        (into.sampleBytes === null || Buffer.compare(e.sampleBytes, into.sampleBytes) < 0)
      ) {
        into.sample = e.sample;
        into.sampleBytes = e.sampleBytes;
      }
    }
  }
  mergeRevenue(t.revenue, part.revenue);
  for (let h = 0; h < 24; h++)
    t.opensByHour[h] = (t.opensByHour[h] ?? 0) + (part.opensByHour[h] ?? 0);
  if (part.pendingBadRecord !== undefined) t.pendingBadRecord ??= part.pendingBadRecord;
  t.lastJsonCut = part.lastJsonCut;
}
