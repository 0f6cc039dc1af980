import { CAMPAIGN_CSV_COLUMNS } from "../../api/csv-columns.js";
import { hashBytes } from "../csv/hash-table.js";
import { CACHE_SLOTS, quickSlot, sameField } from "../csv/intern-table.js";
import { type CsvRecord, fieldText } from "../csv/scanner.js";
import { AnalysisError } from "../errors.js";
import { ROLE_CODE, roleOf } from "../event-roles.js";
import { safeText } from "../safe-text.js";
import { sanitizeSample } from "../stats.js";
import {
  badColumnCount,
  badField,
  COL,
  COLUMN_COUNT,
  checkKeyLength,
  checkTimeShape,
  headerMatches,
  MAX_KEY_BYTES,
} from "./columns.js";
import { localSeconds, NO_TIME } from "./local-time.js";
import { readRevenue } from "./revenue.js";
import type { RoundAcc } from "./round-hash-table.js";
import { RowKeys } from "./row-keys.js";
import { type CampaignTally, type ErrorCodeAcc, MAX_ERROR_CODES } from "./tally.js";

/**
 * The row pass: what one CSV record adds to a tally. Only the columns a figure needs are decoded,
 * and only on the rows that need them; user ids are never turned into strings (see
 * csv/hash-table.ts). Nothing here depends on the rows that came before (see tally.ts).
 */

interface CachedCode {
  view: DataView;
  length: number;
  entry: ErrorCodeAcc;
}

/** The role code of an event type (see event-roles.ts), given the conversion type asked for. */
export function roleCoder(conversionType: string | undefined): (name: string) => number {
  return (name) => ROLE_CODE[roleOf(name, conversionType)];
}

/** True when the bytes `buf[s, e)` sort before `current`. */
function fieldBefore(buf: Uint8Array, s: number, e: number, current: Uint8Array): boolean {
  const n = Math.min(e - s, current.length);
  for (let k = 0; k < n; k++) {
    const x = buf[s + k] as number;
    const y = current[k] as number;
    if (x !== y) return x < y;
  }
  return e - s < current.length;
}

/**
 * The record handler for `t`. `expectHeader`: the records start at the top of the file, whose
 * first line must be the header; a later byte range starts on a data row.
 */
export function rowHandler(
  t: CampaignTally,
  conversionType: string | undefined,
  expectHeader: boolean,
): (rec: CsvRecord) => void {
  const roleCode = roleCoder(conversionType);
  const { eventTypes, eventRoles, eventCounts, channels, channelAcc, errorCodes, revenue } = t;
  const { opensByHour, roundTable, mapBatch } = t;
  const hash = new Int32Array(2);
  const rowKeys = new RowKeys();
  if (!expectHeader) t.headerSeen = true;

  // A failure row's code found by its bytes (a direct-mapped cache, with csv/intern-table.ts's slot
  // and comparison) rather than decoded, cleaned and looked up by text on every failure row; an
  // InternTable itself would refuse codes past its cap, where these go to "(other codes)".
  const codeCache = new Array<CachedCode | undefined>(CACHE_SLOTS).fill(undefined);
  const codeEntry = (rec: CsvRecord): ErrorCodeAcc | undefined => {
    checkKeyLength(rec, COL.errorCode, "error_code");
    const code = safeText(fieldText(rec, COL.errorCode), MAX_KEY_BYTES) || "(none)";
    let entry = errorCodes.get(code);
    if (entry === undefined) {
      if (errorCodes.size >= MAX_ERROR_CODES) {
        t.errorCodesCapped = true;
        const other = errorCodes.get("(other codes)");
        if (other) other.count++;
        else errorCodes.set("(other codes)", { count: 1, sample: "", sampleBytes: null });
        return undefined;
      }
      entry = { count: 0, sample: "", sampleBytes: null };
      errorCodes.set(code, entry);
    }
    return entry;
  };

  const failure = (rec: CsvRecord): void => {
    const slot = quickSlot(rec, COL.errorCode);
    const cached = codeCache[slot];
    let entry: ErrorCodeAcc | undefined;
    if (cached !== undefined && sameField(rec, COL.errorCode, cached)) entry = cached.entry;
    else {
      entry = codeEntry(rec);
      if (entry === undefined) return; // past the cap of codes: counted under "(other codes)"
      if (rec.escaped[COL.errorCode] !== 1) {
        const cs = rec.starts[COL.errorCode] as number;
        const bytes = new Uint8Array(rec.buf.subarray(cs, rec.ends[COL.errorCode] as number));
        codeCache[slot] = { view: new DataView(bytes.buffer), length: bytes.length, entry };
      }
    }
    const ms = rec.starts[COL.errorMessage] as number;
    const me = rec.ends[COL.errorMessage] as number;
    entry.count++;
    // The sample is the smallest message (by its bytes): the same whatever the rows' order.
    if (
      me > ms &&
      (entry.sampleBytes === null || fieldBefore(rec.buf, ms, me, entry.sampleBytes))
    ) {
      // A copy with its own small buffer (Buffer.from would share an 8 KiB pool slab).
      entry.sampleBytes = new Uint8Array(rec.buf.subarray(ms, me));
      entry.sample = sanitizeSample(fieldText(rec, COL.errorMessage));
    }
  };

  return (rec: CsvRecord): void => {
    if (!t.headerSeen) {
      if (!headerMatches(rec)) {
        throw new AnalysisError(
          `Not a campaign export: the first line must be the header of the service's campaign CSV, exactly these ${COLUMN_COUNT} columns in order: ${CAMPAIGN_CSV_COLUMNS.join(", ")}. Check that the file is a campaign_event_data export (start_export with type campaign_event_data).`,
          "not_campaign_export",
        );
      }
      t.headerSeen = true;
      return;
    }
    if (t.pendingBadRecord !== undefined) throw badColumnCount(t.pendingBadRecord, false);
    if (rec.count !== COLUMN_COUNT) {
      // A blank line (one empty field) is tolerated, typically at the end of a file.
      if (rec.count === 1 && rec.ends[0] === rec.starts[0]) return;
      t.pendingBadRecord = { line: rec.line, count: rec.count };
      return;
    }
    // Per row only the length and separators (the hot path); the digits are checked where the
    // time is read (receipts and opens, see localSeconds).
    checkTimeShape(rec, COL.captured, "captured_at");
    t.rows++;
    t.lastLine = rec.line;
    const buf = rec.buf;
    const js = rec.starts[COLUMN_COUNT - 1] as number;
    const je = rec.ends[COLUMN_COUNT - 1] as number;
    t.lastJsonCut = je > js && buf[js] === 0x7b && buf[je - 1] !== 0x7d;
    const known = rec.keyHashed ? rowKeys.get(rec.keyHash) : undefined;
    const type = known !== undefined ? known.type : eventTypes.lookup(rec, COL.event);
    let role = eventRoles[type.id];
    if (role === undefined) {
      role = roleCode(type.name);
      eventRoles[type.id] = role;
      eventCounts[type.id] = 0;
    }
    eventCounts[type.id] = (eventCounts[type.id] ?? 0) + 1;
    let round: RoundAcc;
    if (known !== undefined) round = known.round;
    else {
      round = roundTable.lookup(rec);
      if (rec.keyHashed) rowKeys.set(rec.keyHash, round, type);
    }

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
    if (!hasUser) t.unidentified++;
    // Send and failure rows count no users (about half the rows), so their ids are not hashed.
    else if (role !== 0 && role !== 2) hashBytes(rec.view, us, ue, seed, hash);
    const hi = hash[0] as number;
    const lo = hash[1] as number;

    switch (role) {
      case 0: // sent
      case 1: // received
      case 2: {
        // failed
        const channel = channels.lookup(rec, COL.channel);
        if (round.lastChannel !== channel.id) {
          round.lastChannel = channel.id;
          round.channels.add(channel.id);
        }
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
            const time = localSeconds(buf, s, rec.ends[COL.captured] as number);
            if (time === NO_TIME) throw badField(rec, "captured_at is not a valid time");
            mapBatch.addMin(round.receipts, hi, lo, time);
          }
        } else {
          round.failed++;
          acc.failed++;
          failure(rec);
        }
        break;
      }
      case 3: // control
        round.control++;
        if (hasUser) mapBatch.addMin(round.controlUsers, hi, lo, 0);
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
          const time = localSeconds(buf, s, e);
          if (time === NO_TIME) throw badField(rec, "captured_at is not a valid time");
          mapBatch.addMin(round.firstOpen, hi, lo, time);
        }
        break;
      }
      case 5: // click
        round.clicks++;
        if (hasUser) mapBatch.addMin(round.clickUsers, hi, lo, 0);
        break;
      case 6: // conversion
        round.conversions++;
        if (hasUser) mapBatch.addMin(round.conversionUsers, hi, lo, 0);
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
}
