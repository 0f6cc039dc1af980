import { open } from "node:fs/promises";
import { CAMPAIGN_CSV_COLUMNS } from "../api/schemas.js";
import {
  badColumnCount,
  badField,
  COL,
  COLUMN_COUNT,
  CONTROL_GROUP,
  checkKeyLength,
  checkTime,
  checkTimeShape,
  headerMatches,
  MAX_KEY_BYTES,
} from "./campaign-columns.js";
import type { CampaignSummaryOptions } from "./campaign-summary.js";
import { type CsvRecord, CsvScanError, CsvScanner, fieldText } from "./csv-scanner.js";
import { AnalysisError } from "./errors.js";
import { ROLE_CODE, roleOf } from "./event-roles.js";
import { hashBytes, U64Map } from "./hash-table.js";
import { InternTable } from "./intern-table.js";
import { localSeconds, NO_TIME } from "./local-time.js";
import { newRevenueAcc, type RevenueAcc, readRevenue } from "./revenue.js";
import { safeText } from "./safe-text.js";
import { sanitizeSample } from "./stats.js";

/**
 * The row pass: one streaming read of a campaign CSV into per-round and per-file accumulators.
 * Only the columns a figure needs are decoded, and only on the rows that need them; user ids are
 * never turned into strings (see hash-table.ts).
 */

/** A service export holds at most 120 rounds; far more means a hostile or unrelated file. */
const MAX_ROUNDS = 1_000;
const READ_CHUNK = 1 << 20;
const MAX_EVENT_TYPES = 1_000;
const MAX_ERROR_CODES = 1_000;
const MAX_CHANNELS = 200;

export interface RoundAcc {
  task_id: string;
  scheduled_at: string;
  group: string;
  /** the control group (대조군): its conversion rows' revenue is kept apart */
  isControl: boolean;
  /** The raw bytes from task_id to group of the row that last selected this round. */
  rawKey: { bytes: Buffer; end0: number; start1: number; end1: number; start2: number } | null;
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
  channels: Set<number>;
}

export interface ChannelAcc {
  sent: number;
  received: number;
  failed: number;
}

/** Initial sizes of a round's user maps, in entries (see U64Map.forEntries). */
interface RoundSizes {
  receipts: number;
  firstOpen: number;
  clicks: number;
  conversions: number;
}

function newRound(task: string, scheduled: string, group: string, sizes: RoundSizes): RoundAcc {
  const shownGroup = safeText(group, MAX_KEY_BYTES);
  return {
    task_id: safeText(task, MAX_KEY_BYTES),
    scheduled_at: scheduled,
    group: shownGroup,
    // The cleaned name, as the finish step compares it (control_conversions).
    isControl: shownGroup === CONTROL_GROUP,
    rawKey: null,
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

export interface CampaignTally {
  path: string;
  bytes: number;
  rows: number;
  unidentified: number;
  rounds: RoundAcc[];
  eventTypes: InternTable;
  eventRoles: number[];
  eventCounts: number[];
  channels: InternTable;
  channelAcc: ChannelAcc[];
  errorCodes: Map<string, { count: number; sample: string }>;
  revenue: RevenueAcc;
  openUsers: U64Map;
  clickUsers: U64Map;
  conversionUsers: U64Map;
  receivedUsers: U64Map;
  opensByHour: number[];
  conversionType: string | undefined;
  timeZone: string;
  warnings: string[];
}

/** Reads the campaign export CSV at `path` (already resolved and size-checked) in one pass. */
export async function tallyCampaignRows(
  path: string,
  bytes: number,
  options: CampaignSummaryOptions = {},
): Promise<CampaignTally> {
  const conversionType = options.conversionEventType?.trim() || undefined;
  const eventTypes = new InternTable(MAX_EVENT_TYPES, "event_type");
  const eventRoles: number[] = [];
  const eventCounts: number[] = [];
  const channels = new InternTable(MAX_CHANNELS, "channel");
  const channelAcc: ChannelAcc[] = [];
  const rounds: RoundAcc[] = [];
  const roundIndex = new Map<string, RoundAcc>();
  const errorCodes = new Map<string, { count: number; sample: string }>();
  const revenue: RevenueAcc = newRevenueAcc();
  const openUsers = new U64Map(1024, false);
  const clickUsers = new U64Map(1024, false);
  const conversionUsers = new U64Map(1024, false);
  // Sized from the file (a receipt row is 100-150 bytes) so the big sets rarely grow; capped so a
  // huge file does not reserve memory it may not need.
  const receivedUsers = new U64Map(Math.min(1 << 20, bytes / 400), false);
  // The first round's maps are sized from the file; each later round's from the round before
  // it (a campaign's rounds are similar), so they rarely grow, and a file of many small rounds
  // never reserves a large map for each.
  const firstSizes: RoundSizes = {
    receipts: Math.min(1 << 16, bytes / 4000),
    firstOpen: Math.min(1 << 14, bytes / 16000),
    clicks: 16,
    conversions: 16,
  };
  const sizesAfter = (prev: RoundAcc | undefined): RoundSizes =>
    prev === undefined
      ? firstSizes
      : {
          receipts: prev.receipts.size,
          firstOpen: prev.firstOpen.size,
          clicks: prev.clickUsers.size,
          conversions: prev.conversionUsers.size,
        };
  const opensByHour = new Array<number>(24).fill(0);
  const hash = new Int32Array(2);
  let rows = 0;
  let unidentified = 0;
  let headerSeen = false;
  let last: RoundAcc | undefined;
  let pendingBadRecord: { line: number; count: number } | undefined;
  /** The last row's line, and whether its last field is JSON visibly cut short. */
  let lastLine = 0;
  let lastJsonCut = false;

  const roundFor = (rec: CsvRecord): RoundAcc => {
    // Rows of one round come in runs: compare the raw bytes of the three key fields (and where
    // each field starts and ends) with the previous row's before decoding anything.
    const rawKey = last?.rawKey;
    if (rawKey !== undefined && rawKey !== null) {
      const s0 = rec.starts[COL.task] as number;
      const raw = rawKey.bytes;
      if (
        (rec.ends[COL.group] as number) - s0 === raw.length &&
        (rec.ends[COL.task] as number) - s0 === rawKey.end0 &&
        (rec.starts[COL.scheduled] as number) - s0 === rawKey.start1 &&
        (rec.ends[COL.scheduled] as number) - s0 === rawKey.end1 &&
        (rec.starts[COL.group] as number) - s0 === rawKey.start2
      ) {
        const buf = rec.buf;
        let k = raw.length - 1;
        while (k >= 0 && buf[s0 + k] === raw[k]) k--;
        if (k < 0) return last as RoundAcc;
      }
    }
    checkKeyLength(rec, COL.task, "task_id");
    checkKeyLength(rec, COL.group, "group");
    checkTime(rec, COL.scheduled, "scheduled_at");
    const task = fieldText(rec, COL.task);
    const scheduled = fieldText(rec, COL.scheduled);
    const group = fieldText(rec, COL.group);
    const key = `${task}\u0000${scheduled}\u0000${group}`;
    let round = roundIndex.get(key);
    if (round === undefined) {
      if (rounds.length >= MAX_ROUNDS) {
        throw new AnalysisError(
          `Line ${rec.line}: more than ${MAX_ROUNDS} distinct send rounds (task_id, scheduled_at, group); a service export holds at most 120 rounds.`,
          "not_campaign_export",
        );
      }
      round = newRound(task, scheduled, group, sizesAfter(rounds[rounds.length - 1]));
      roundIndex.set(key, round);
      rounds.push(round);
    }
    const plain =
      rec.escaped[COL.task] === 0 &&
      rec.escaped[COL.scheduled] === 0 &&
      rec.escaped[COL.group] === 0;
    const s0 = rec.starts[COL.task] as number;
    round.rawKey = plain
      ? {
          bytes: Buffer.from(rec.buf.subarray(s0, rec.ends[COL.group])),
          end0: (rec.ends[COL.task] as number) - s0,
          start1: (rec.starts[COL.scheduled] as number) - s0,
          end1: (rec.ends[COL.scheduled] as number) - s0,
          start2: (rec.starts[COL.group] as number) - s0,
        }
      : null;
    last = round;
    return round;
  };

  const onRecord = (rec: CsvRecord): void => {
    if (!headerSeen) {
      if (!headerMatches(rec)) {
        throw new AnalysisError(
          `Not a campaign export: the first line must be the header of the service's campaign CSV, exactly these ${COLUMN_COUNT} columns in order: ${CAMPAIGN_CSV_COLUMNS.join(", ")}. Check that the file is a campaign_event_data export (start_export with type campaign_event_data).`,
          "not_campaign_export",
        );
      }
      headerSeen = true;
      return;
    }
    if (pendingBadRecord !== undefined) throw badColumnCount(pendingBadRecord, false);
    if (rec.count !== COLUMN_COUNT) {
      // A blank line (one empty field) is tolerated, typically at the end of a file.
      if (rec.count === 1 && rec.ends[0] === rec.starts[0]) return;
      pendingBadRecord = { line: rec.line, count: rec.count };
      return;
    }
    // Per row only the length and separators (the hot path); the digits are checked where the
    // time is read (receipts and opens, see localSeconds).
    checkTimeShape(rec, COL.captured, "captured_at");
    rows++;
    lastLine = rec.line;
    const js = rec.starts[COLUMN_COUNT - 1] as number;
    const je = rec.ends[COLUMN_COUNT - 1] as number;
    lastJsonCut = je > js && rec.buf[js] === 0x7b && rec.buf[je - 1] !== 0x7d;
    const type = eventTypes.lookup(rec, COL.event);
    let role = eventRoles[type.id];
    if (role === undefined) {
      role = ROLE_CODE[roleOf(type.name, conversionType)];
      eventRoles[type.id] = role;
      eventCounts[type.id] = 0;
    }
    eventCounts[type.id] = (eventCounts[type.id] ?? 0) + 1;
    const round = roundFor(rec);
    const buf = rec.buf;

    // The user: platform_user_id, else user_id, hashed with different seeds so equal texts in
    // the two columns stay different people.
    let us = rec.starts[COL.platformUser] as number;
    let ue = rec.ends[COL.platformUser] as number;
    let seed = 0x51;
    if (ue === us) {
      us = rec.starts[COL.user] as number;
      ue = rec.ends[COL.user] as number;
      seed = 0x75;
    }
    const hasUser = ue > us;
    if (!hasUser) unidentified++;
    // Send and failure rows count no users (about half the rows), so their ids are not hashed.
    else if (role !== 0 && role !== 2) hashBytes(buf, us, ue, seed, hash);
    const hi = hash[0] as number;
    const lo = hash[1] as number;

    switch (role) {
      case 0: // send
      case 1: // receipt
      case 2: {
        // failure
        const channel = channels.lookup(rec, COL.channel);
        round.channels.add(channel.id);
        let acc = channelAcc[channel.id];
        if (acc === undefined) {
          acc = { sent: 0, received: 0, failed: 0 };
          channelAcc[channel.id] = acc;
        }
        if (role === 0) {
          round.sent++;
          acc.sent++;
        } else if (role === 1) {
          round.received++;
          acc.received++;
          if (hasUser) {
            const s = rec.starts[COL.captured] as number;
            const t = localSeconds(buf, s, rec.ends[COL.captured] as number);
            if (t === NO_TIME) throw badField(rec, "captured_at is not a valid time");
            round.receipts.addMin(hi, lo, t);
            receivedUsers.add(hi, lo);
          }
        } else {
          round.failed++;
          acc.failed++;
          checkKeyLength(rec, COL.errorCode, "error_code");
          const code = safeText(fieldText(rec, COL.errorCode), MAX_KEY_BYTES) || "(none)";
          const entry = errorCodes.get(code);
          if (entry === undefined) {
            if (errorCodes.size >= MAX_ERROR_CODES) {
              const other = errorCodes.get("(other codes)");
              if (other) other.count++;
              else errorCodes.set("(other codes)", { count: 1, sample: "" });
            } else {
              errorCodes.set(code, {
                count: 1,
                sample: sanitizeSample(fieldText(rec, COL.errorMessage)),
              });
            }
          } else {
            entry.count++;
            if (entry.sample === "")
              entry.sample = sanitizeSample(fieldText(rec, COL.errorMessage));
          }
        }
        break;
      }
      case 3: // control
        round.control++;
        if (hasUser) round.controlUsers.add(hi, lo);
        break;
      case 4: {
        // open
        round.opens++;
        const s = rec.starts[COL.captured] as number;
        const e = rec.ends[COL.captured] as number;
        if (e - s >= 13) {
          const h = ((buf[s + 11] as number) - 48) * 10 + ((buf[s + 12] as number) - 48);
          if (h >= 0 && h < 24) opensByHour[h] = (opensByHour[h] ?? 0) + 1;
        }
        if (hasUser) {
          const t = localSeconds(buf, s, e);
          if (t === NO_TIME) throw badField(rec, "captured_at is not a valid time");
          round.firstOpen.addMin(hi, lo, t);
          openUsers.add(hi, lo);
        }
        break;
      }
      case 5: // click
        round.clicks++;
        if (hasUser) {
          round.clickUsers.add(hi, lo);
          clickUsers.add(hi, lo);
        }
        break;
      case 6: // conversion
        round.conversions++;
        if (hasUser) {
          round.conversionUsers.add(hi, lo);
          conversionUsers.add(hi, lo);
        }
        readRevenue(
          revenue,
          fieldText(rec, COL.properties),
          fieldText(rec, COL.customProperties),
          round.isControl,
        );
        break;
      default:
        break;
    }
  };

  const scanner = new CsvScanner(onRecord);
  let endsWithNewline = false;
  try {
    // Two reused read buffers: the next chunk is read (on libuv's thread pool) while this one is
    // scanned, so the scan does not wait for the disk; the scanner copies what it keeps, so
    // nothing is allocated per chunk.
    const handle = await open(path, "r");
    const buffers = [Buffer.allocUnsafe(READ_CHUNK), Buffer.allocUnsafe(READ_CHUNK)];
    let next = 0;
    let pending: Promise<{ bytesRead: number }> | undefined;
    const readNext = (): Promise<{ bytesRead: number }> =>
      handle.read(buffers[next] as Buffer, 0, READ_CHUNK, null);
    try {
      pending = readNext();
      for (;;) {
        if (options.signal?.aborted)
          throw new AnalysisError("The summary was cancelled.", "aborted");
        const { bytesRead } = await pending;
        pending = undefined;
        if (bytesRead === 0) break;
        const chunk = buffers[next] as Buffer;
        next ^= 1;
        pending = readNext();
        scanner.push(chunk.subarray(0, bytesRead));
        const lastByte = chunk[bytesRead - 1];
        endsWithNewline = lastByte === 0x0a || lastByte === 0x0d;
      }
    } finally {
      // A read still in flight (the scan failed or was cancelled) must finish before the close.
      if (pending !== undefined) await pending.catch(() => undefined);
      await handle.close();
    }
    scanner.end();
  } catch (error) {
    if (error instanceof CsvScanError) {
      throw new AnalysisError(
        `The campaign CSV is malformed: ${error.message} Export the file again; if it keeps failing, the file was changed or damaged after download.`,
        "malformed_csv",
      );
    }
    throw error;
  }
  if (!headerSeen) {
    throw new AnalysisError(
      "Not a campaign export: the file is empty. Export the campaign again.",
      "not_campaign_export",
    );
  }
  if (pendingBadRecord !== undefined) throw badColumnCount(pendingBadRecord, !endsWithNewline);
  // The service ends every row with a line break; a file without one was most likely cut short
  // (an interrupted download), which only shows when the cut falls inside the last column.
  const warnings: string[] = [];
  if (!endsWithNewline && rows > 0) {
    if (lastJsonCut) {
      throw new AnalysisError(
        `The campaign CSV is malformed: line ${lastLine}, the last row, ends inside its JSON column and the file does not end with a line break: the file looks truncated (an interrupted download?). Download or export it again.`,
        "malformed_csv",
      );
    }
    warnings.push(
      `The file does not end with a line break, so it may be truncated (an interrupted download?); its last row (line ${lastLine}) was counted. If the numbers look low, download or export it again.`,
    );
  }

  return {
    path,
    bytes,
    rows,
    unidentified,
    rounds,
    eventTypes,
    eventRoles,
    eventCounts,
    channels,
    channelAcc,
    errorCodes,
    revenue,
    openUsers,
    clickUsers,
    conversionUsers,
    receivedUsers,
    opensByHour,
    conversionType,
    timeZone: options.timeZone ?? "Asia/Seoul",
    warnings,
  };
}
