import { open } from "node:fs/promises";
import { CAMPAIGN_CSV_COLUMNS } from "../api/schemas.js";
import { type CsvRecord, CsvScanError, CsvScanner, fieldEquals, fieldText } from "./csv-scanner.js";
import { AnalysisError } from "./errors.js";
import { hashBytes, U64Map } from "./hash-table.js";
import { safeText } from "./safe-text.js";
import type { CampaignRound, CampaignSummary, Comparison } from "./schemas.js";
import {
  formatP,
  quantileSorted,
  ratio,
  round6,
  sanitizeSample,
  twoProportionTest,
} from "./stats.js";

/**
 * Campaign CSV summary (spec 2.4 and 6) in one streaming pass over the file. Only the columns a
 * figure needs are decoded, and only on the rows that need them; user ids are never turned into
 * strings (see hash-table.ts).
 */

export interface CampaignSummaryOptions {
  conversionEventType?: string;
  timeZone?: string;
  signal?: AbortSignal;
}

const COL = {
  task: 0,
  scheduled: 1,
  group: 2,
  event: 3,
  user: 4,
  platformUser: 5,
  captured: 6,
  channel: 7,
  errorCode: 8,
  errorMessage: 9,
  properties: 10,
  customProperties: 11,
} as const;
const COLUMN_COUNT = CAMPAIGN_CSV_COLUMNS.length;
const CONTROL_GROUP = "대조군";
/** A service export holds at most 120 rounds; far more means a hostile or unrelated file. */
const MAX_ROUNDS = 1_000;
/** Longest task_id, group, event_type, channel or error_code accepted (see fieldProblem). */
const MAX_KEY_BYTES = 256;
const READ_CHUNK = 1 << 20;
const MAX_EVENT_TYPES = 1_000;
const MAX_ERROR_CODES = 1_000;
const MAX_CHANNELS = 200;

const AMOUNT_KEYS = ["revenue", "amount", "price", "value", "total", "payment_amount"];
const CURRENCY_KEYS = ["currency", "currency_code"];

type Role = CampaignSummary["event_types"][number]["role"];

interface Interned {
  bytes: Buffer;
  /** The value as written (compared with inputs). */
  name: string;
  /** The value made safe to show (see safe-text.ts). */
  shown: string;
  id: number;
}

function quickKey(rec: CsvRecord, col: number): number {
  const s = rec.starts[col] as number;
  const len = (rec.ends[col] as number) - s;
  if (len <= 0) return 0;
  return len * 65536 + (rec.buf[s + (len >> 1)] as number) * 256 + (rec.buf[s + len - 1] as number);
}

/** Maps a column's distinct byte values to small ids without decoding every row. */
class InternTable {
  readonly items: Interned[] = [];
  /** Length and two bytes of a value -> its entry: one Map probe instead of a scan per row. */
  private readonly byKey = new Map<number, Interned>();
  private last: Interned | undefined;
  constructor(
    private readonly cap: number,
    private readonly what: string,
  ) {}

  lookup(rec: CsvRecord, col: number): Interned {
    const last = this.last;
    if (last !== undefined && fieldEquals(rec, col, last.bytes)) return last;
    const key = quickKey(rec, col);
    const hit = this.byKey.get(key);
    if (hit !== undefined && fieldEquals(rec, col, hit.bytes)) {
      this.last = hit;
      return hit;
    }
    for (const item of this.items) {
      if (fieldEquals(rec, col, item.bytes)) {
        this.last = item;
        return item;
      }
    }
    checkKeyLength(rec, col, this.what);
    const name = fieldText(rec, col);
    // Escaped values compare by text; they are rare enough not to matter for speed.
    const existing = this.items.find((item) => item.name === name);
    if (existing !== undefined) return existing;
    if (this.items.length >= this.cap) {
      throw new AnalysisError(
        `Line ${rec.line}: more than ${this.cap} distinct ${this.what} values; this does not look like a campaign export from the service.`,
        "not_campaign_export",
      );
    }
    const item: Interned = {
      bytes: Buffer.from(name, "utf8"),
      name,
      shown: safeText(name, MAX_KEY_BYTES),
      id: this.items.length,
    };
    this.items.push(item);
    if (!this.byKey.has(key)) this.byKey.set(key, item);
    this.last = item;
    return item;
  }
}

interface RoundAcc {
  task_id: string;
  scheduled_at: string;
  group: string;
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

interface ChannelAcc {
  sent: number;
  received: number;
  failed: number;
}

const NO_TIME = -2147483648;

/**
 * Seconds since 2000-01-01 of a `YYYY-MM-DD HH:mm:ss` local time text, read straight from the
 * bytes; NO_TIME when the text has another shape. Both ends of a receipt-to-open interval are in
 * the same local zone, so their difference is exact except across a DST change (Asia/Seoul has
 * none).
 */
function localSeconds(buf: Buffer, s: number, e: number): number {
  if (e - s < 19) return NO_TIME;
  const d = (k: number): number => (buf[s + k] as number) - 48;
  // Digit positions of YYYY-MM-DD HH:mm:ss, checked without building anything per call.
  for (let k = 0; k < 19; k++) {
    if (k === 4 || k === 7 || k === 10 || k === 13 || k === 16) continue;
    const v = d(k);
    if (v < 0 || v > 9) return NO_TIME;
  }
  const year = d(0) * 1000 + d(1) * 100 + d(2) * 10 + d(3);
  const month = d(5) * 10 + d(6);
  const day = d(8) * 10 + d(9);
  const hour = d(11) * 10 + d(12);
  const minute = d(14) * 10 + d(15);
  const second = d(17) * 10 + d(18);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return NO_TIME;
  }
  // Days from civil (H. Hinnant), relative to 2000-01-01.
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  const days = era * 146097 + doe - 730425;
  const secs = days * 86400 + hour * 3600 + minute * 60 + second;
  return secs >= -2147483647 && secs <= 2147483647 ? secs : NO_TIME;
}

/** True when bytes s..e are exactly `YYYY-MM-DD HH:mm:ss` (digits and separators). */
function isLocalTime(buf: Buffer, s: number, e: number): boolean {
  if (e - s !== 19) return false;
  for (let k = 0; k < 19; k++) {
    const c = buf[s + k] as number;
    if (k === 4 || k === 7) {
      if (c !== 0x2d) return false;
    } else if (k === 10) {
      if (c !== 0x20) return false;
    } else if (k === 13 || k === 16) {
      if (c !== 0x3a) return false;
    } else if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/**
 * Field shapes are checked before a field is interned or used as a key, each where it is first
 * decoded (rows that repeat the previous row's key bytes were checked with that row): very long
 * keys would make every lookup slow (V8 hashes strings over 16,383 characters by length only) and
 * the result and its text unbounded.
 */
function badField(rec: CsvRecord, problem: string): AnalysisError {
  return new AnalysisError(
    `Not a campaign export: line ${rec.line}: ${problem}, which a campaign export from the service never has. Check that the file is an unedited campaign_event_data export.`,
    "not_campaign_export",
  );
}

function checkKeyLength(rec: CsvRecord, col: number, name: string): void {
  if ((rec.ends[col] as number) - (rec.starts[col] as number) > MAX_KEY_BYTES) {
    throw badField(rec, `${name} is longer than ${MAX_KEY_BYTES} bytes`);
  }
}

function checkTimeShape(rec: CsvRecord, col: number, name: string): void {
  const s = rec.starts[col] as number;
  const b = rec.buf;
  if (
    (rec.ends[col] as number) - s !== 19 ||
    b[s + 4] !== 0x2d ||
    b[s + 7] !== 0x2d ||
    b[s + 10] !== 0x20 ||
    b[s + 13] !== 0x3a ||
    b[s + 16] !== 0x3a
  ) {
    throw badField(rec, `${name} is not a YYYY-MM-DD HH:mm:ss time`);
  }
}

function checkTime(rec: CsvRecord, col: number, name: string): void {
  if (!isLocalTime(rec.buf, rec.starts[col] as number, rec.ends[col] as number)) {
    throw badField(rec, `${name} is not a YYYY-MM-DD HH:mm:ss time`);
  }
}

function roleOf(name: string, conversionType: string | undefined): Role {
  switch (name) {
    case "message_sent":
      return "send";
    case "message_received":
      return "receipt";
    case "message_failed":
      return "failure";
    case "control_assigned":
      return "control";
    case "landing_clicked":
      return "click";
  }
  // An explicit choice wins over the suffix rule (a *_clicked type can be the conversion).
  if (conversionType !== undefined && name === conversionType) return "conversion";
  // An unknown channel's open event still counts as an open: the suffix is what marks it.
  if (name.endsWith("_opened") || name.endsWith("_clicked")) return "open";
  if (conversionType === undefined) return "conversion";
  return name === conversionType ? "conversion" : "other";
}

const ROLE_CODE: Record<Role, number> = {
  send: 0,
  receipt: 1,
  failure: 2,
  control: 3,
  open: 4,
  click: 5,
  conversion: 6,
  other: 7,
};

function headerMatches(rec: CsvRecord): boolean {
  if (rec.count !== COLUMN_COUNT) return false;
  for (let i = 0; i < COLUMN_COUNT; i++) {
    let text = fieldText(rec, i);
    if (i === 0 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (text !== CAMPAIGN_CSV_COLUMNS[i]) return false;
  }
  return true;
}

function newRound(task: string, scheduled: string, group: string, receiptSlots: number): RoundAcc {
  return {
    task_id: safeText(task, MAX_KEY_BYTES),
    scheduled_at: scheduled,
    group: safeText(group, MAX_KEY_BYTES),
    rawKey: null,
    sent: 0,
    received: 0,
    failed: 0,
    control: 0,
    opens: 0,
    clicks: 0,
    conversions: 0,
    receipts: new U64Map(receiptSlots),
    firstOpen: new U64Map(receiptSlots >> 2),
    clickUsers: new U64Map(16, false),
    conversionUsers: new U64Map(16, false),
    controlUsers: new U64Map(16, false),
    channels: new Set(),
  };
}

interface RevenueAcc {
  byCurrency: Map<string, { amount: number; conversions: number }>;
  amountKeys: Map<string, number>;
  currencyKeys: Map<string, number>;
  unparsed: number;
}

function readRevenue(acc: RevenueAcc, json: string, fallbackJson: string): void {
  for (const text of [json, fallbackJson]) {
    if (text === "" || text === "{}") continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      acc.unparsed++;
      continue;
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) continue;
    const props = value as Record<string, unknown>;
    let amount: number | undefined;
    for (const key of AMOUNT_KEYS) {
      const raw = props[key];
      const n = typeof raw === "number" ? raw : typeof raw === "string" ? Number(raw) : Number.NaN;
      if (raw !== "" && Number.isFinite(n)) {
        amount = n;
        acc.amountKeys.set(key, (acc.amountKeys.get(key) ?? 0) + 1);
        break;
      }
    }
    if (amount === undefined) continue;
    let currency = "(none)";
    for (const key of CURRENCY_KEYS) {
      const raw = props[key];
      if (typeof raw === "string" && raw.trim() !== "") {
        currency = safeText(raw, 12).toUpperCase();
        acc.currencyKeys.set(key, (acc.currencyKeys.get(key) ?? 0) + 1);
        break;
      }
    }
    const entry = acc.byCurrency.get(currency);
    if (entry === undefined) {
      if (acc.byCurrency.size < 100) acc.byCurrency.set(currency, { amount, conversions: 1 });
    } else {
      entry.amount += amount;
      entry.conversions++;
    }
    return;
  }
}

function mostUsed(keys: Map<string, number>): string | null {
  let best: string | null = null;
  let bestCount = 0;
  for (const [key, count] of keys) {
    if (count > bestCount) {
      best = key;
      bestCount = count;
    }
  }
  return best;
}

/** Summarizes a campaign export CSV at `path` (already resolved and size-checked). */
export async function summarizeCampaignCsv(
  path: string,
  bytes: number,
  options: CampaignSummaryOptions = {},
): Promise<CampaignSummary> {
  const conversionType = options.conversionEventType?.trim() || undefined;
  const eventTypes = new InternTable(MAX_EVENT_TYPES, "event_type");
  const eventRoles: number[] = [];
  const eventCounts: number[] = [];
  const channels = new InternTable(MAX_CHANNELS, "channel");
  const channelAcc: ChannelAcc[] = [];
  const rounds: RoundAcc[] = [];
  const roundIndex = new Map<string, RoundAcc>();
  const errorCodes = new Map<string, { count: number; sample: string }>();
  const revenue: RevenueAcc = {
    byCurrency: new Map(),
    amountKeys: new Map(),
    currencyKeys: new Map(),
    unparsed: 0,
  };
  const openUsers = new U64Map(1024, false);
  const clickUsers = new U64Map(1024, false);
  const conversionUsers = new U64Map(1024, false);
  // Sized from the file (a receipt row is 100-150 bytes) so the big sets rarely grow; capped so a
  // huge file does not reserve memory it may not need.
  const receivedUsers = new U64Map(Math.min(1 << 20, bytes / 400), false);
  const roundSlots = Math.min(1 << 16, bytes / 4000);
  const opensByHour = new Array<number>(24).fill(0);
  const hash = new Uint32Array(2);
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
      // Only the first rounds get large maps: a file of many small rounds must not reserve
      // a large map for each.
      round = newRound(task, scheduled, group, rounds.length < 16 ? roundSlots : 16);
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
    if (hasUser) {
      hashBytes(buf, us, ue, seed, hash);
    } else {
      unidentified++;
    }
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
        readRevenue(revenue, fieldText(rec, COL.properties), fieldText(rec, COL.customProperties));
        break;
      default:
        break;
    }
  };

  const scanner = new CsvScanner(onRecord);
  let endsWithNewline = false;
  try {
    // One reused read buffer: the scanner copies what it keeps, so nothing is allocated per chunk.
    const handle = await open(path, "r");
    try {
      const chunk = Buffer.allocUnsafe(READ_CHUNK);
      for (;;) {
        if (options.signal?.aborted)
          throw new AnalysisError("The summary was cancelled.", "aborted");
        const { bytesRead } = await handle.read(chunk, 0, READ_CHUNK, null);
        if (bytesRead === 0) break;
        scanner.push(chunk.subarray(0, bytesRead));
        const lastByte = chunk[bytesRead - 1];
        endsWithNewline = lastByte === 0x0a || lastByte === 0x0d;
      }
    } finally {
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

  return finish({
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
  });
}

function badColumnCount(bad: { line: number; count: number }, atEnd: boolean): AnalysisError {
  const why = atEnd
    ? " It is the last line and the file does not end with a line break: the file looks truncated (an interrupted download?). Download or export it again."
    : " A campaign export has exactly 13 columns on every row; the file was probably edited or damaged.";
  return new AnalysisError(
    `The campaign CSV is malformed: line ${bad.line} has ${bad.count} columns instead of ${COLUMN_COUNT}.${why}`,
    "malformed_csv",
  );
}

interface FinishInput {
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

const ROLE_NAMES = Object.keys(ROLE_CODE) as Role[];

interface RoundDerived {
  round: CampaignRound;
  /** received users who opened */
  openedReceived: number;
  /** open users who converted */
  convertedOpeners: number;
  /** received users who converted */
  convertedReceived: number;
  controlUsers: number;
  controlConverted: number;
}

function finish(input: FinishInput): CampaignSummary {
  const deltas: number[] = [];
  let opensBeforeReceipt = 0;
  const derived: RoundDerived[] = input.rounds.map((r) => {
    let openedReceived = 0;
    r.firstOpen.forEach((hi, lo, openAt) => {
      const receivedAt = r.receipts.get(hi, lo, NO_TIME);
      if (receivedAt === NO_TIME) return;
      openedReceived++;
      if (openAt === 2147483647 || receivedAt === 2147483647) return;
      if (openAt < receivedAt) opensBeforeReceipt++;
      else deltas.push(openAt - receivedAt);
    });
    let convertedOpeners = 0;
    let convertedReceived = 0;
    let controlConverted = 0;
    r.conversionUsers.forEach((hi, lo) => {
      if (r.firstOpen.has(hi, lo)) convertedOpeners++;
      if (r.receipts.has(hi, lo)) convertedReceived++;
      if (r.controlUsers.has(hi, lo)) controlConverted++;
    });
    const receivedUsers = r.receipts.size;
    const openUsers = r.firstOpen.size;
    const round: CampaignRound = {
      task_id: r.task_id,
      scheduled_at: r.scheduled_at,
      group: r.group,
      sent: r.sent,
      received: r.received,
      failed: r.failed,
      unsettled: r.sent - r.received - r.failed,
      control_assigned: r.control,
      opens: r.opens,
      open_users: openUsers,
      clicks: r.clicks,
      click_users: r.clickUsers.size,
      conversions: r.conversions,
      conversion_users: r.conversionUsers.size,
      success_rate: round6(ratio(r.received, r.received + r.failed)),
      received_users: receivedUsers,
      open_rate: round6(ratio(r.opens, r.received)),
      open_rate_users: round6(ratio(openUsers, receivedUsers)),
      conversion_rate: round6(ratio(r.conversions, r.opens)),
      channels: [...r.channels].map((id) => input.channels.items[id]?.shown ?? ""),
    };
    return {
      round,
      openedReceived,
      convertedOpeners,
      convertedReceived,
      controlUsers: r.controlUsers.size,
      controlConverted,
    };
  });

  const sum = (f: (r: CampaignRound) => number): number =>
    derived.reduce((acc, d) => acc + f(d.round), 0);
  const sent = sum((r) => r.sent);
  const received = sum((r) => r.received);
  const failed = sum((r) => r.failed);
  const opens = sum((r) => r.opens);
  const conversions = sum((r) => r.conversions);
  const controlConversions = derived
    .filter((d) => d.round.group === CONTROL_GROUP)
    .reduce((acc, d) => acc + d.round.conversions, 0);
  const totals: CampaignSummary["totals"] = {
    sent,
    received,
    failed,
    unsettled: sent - received - failed,
    control_assigned: sum((r) => r.control_assigned),
    opens,
    open_users: input.openUsers.size,
    clicks: sum((r) => r.clicks),
    click_users: input.clickUsers.size,
    conversions,
    conversion_users: input.conversionUsers.size,
    success_rate: round6(ratio(received, received + failed)),
    received_users: input.receivedUsers.size,
    open_rate: round6(ratio(opens, received)),
    open_rate_users: round6(ratio(input.openUsers.size, input.receivedUsers.size)),
    // Control-group conversions have no opens behind them: they stay in `conversions` (the
    // contract's row count) but not in the rate by opens.
    conversion_rate: round6(ratio(conversions - controlConversions, opens)),
  };

  const errorList = [...input.errorCodes.entries()].sort(
    (a, b) => b[1].count - a[1].count || a[0].localeCompare(b[0]),
  );

  const eventTypes = input.eventTypes.items.map((item) => ({
    event_type: item.shown,
    count: input.eventCounts[item.id] ?? 0,
    role: ROLE_NAMES[input.eventRoles[item.id] ?? 7] ?? "other",
  }));
  const conversionTypes = eventTypes
    .filter((t) => t.role === "conversion")
    .map((t) => t.event_type);
  let conversionNote: string;
  if (input.conversionType !== undefined) {
    const asked = safeText(input.conversionType, MAX_KEY_BYTES);
    conversionNote = conversionTypes.length
      ? `Conversions are rows of "${asked}", as requested.`
      : `No row has the requested conversion event type "${asked}"; event types in the file: ${listed(eventTypes.map((t) => t.event_type)) || "none"}.`;
  } else {
    conversionNote = conversionTypes.length
      ? `Conversion event type inferred as ${listed(conversionTypes.map((t) => `"${t}"`))} (every type that is not a send-record, open or landing_clicked event); pass conversion_event_type to choose one.`
      : "No conversion events in the file (no event type besides send records, opens and landing clicks).";
  }

  const byChannel = input.channels.items.map((item) => {
    const acc = input.channelAcc[item.id] ?? { sent: 0, received: 0, failed: 0 };
    return {
      channel: item.shown || "(empty)",
      sent: acc.sent,
      received: acc.received,
      failed: acc.failed,
      success_rate: round6(ratio(acc.received, acc.received + acc.failed)),
    };
  });

  const amountKey = mostUsed(input.revenue.amountKeys);
  const currencyKey = mostUsed(input.revenue.currencyKeys);
  const byCurrency = [...input.revenue.byCurrency.entries()]
    .map(([currency, v]) => ({ currency, amount: round6(v.amount), conversions: v.conversions }))
    .sort((a, b) => b.conversions - a.conversions);
  const revenueNote =
    conversions === 0
      ? "No conversion events, so no revenue."
      : amountKey === null
        ? `No amount found in the conversion events' properties (looked for keys ${AMOUNT_KEYS.join(", ")}).`
        : `Amounts read from the "${amountKey}" property${currencyKey ? `, currency from "${currencyKey}"` : ", with no currency property (listed as (none))"}; amounts are never added across currencies.`;

  deltas.sort((a, b) => a - b);
  const ab = abReadout(derived);

  const result: CampaignSummary = {
    kind: "campaign_event_data",
    summary: "",
    rows: input.rows,
    rounds: derived.map((d) => d.round),
    totals,
    error_codes: errorList.map(([error_code, v]) => ({ error_code, count: v.count })),
    file: { path: input.path, bytes: input.bytes },
    event_types: eventTypes,
    conversion_event_type: {
      types: conversionTypes,
      source: input.conversionType !== undefined ? "input" : "inferred",
      note: conversionNote,
    },
    delivery: {
      success_rate: totals.success_rate,
      unsettled: totals.unsettled,
      by_channel: byChannel,
    },
    failures: errorList.map(([error_code, v]) => ({
      error_code,
      count: v.count,
      sample_message: v.sample,
    })),
    revenue: {
      amount_key: amountKey,
      currency_key: currencyKey,
      by_currency: byCurrency,
      unparsed_properties: input.revenue.unparsed,
      note: revenueNote,
    },
    ab_test: ab,
    timing: {
      time_zone: input.timeZone,
      receipt_to_first_open: {
        pairs: deltas.length,
        median_seconds: quantileSorted(deltas, 0.5),
        p90_seconds: quantileSorted(deltas, 0.9),
        opens_before_receipt: opensBeforeReceipt,
      },
      opens_by_hour: input.opensByHour,
    },
    unidentified_rows: input.unidentified,
    warnings: input.warnings,
  };
  result.summary = oneLine(result);
  return result;
}

/** A list for a note, kept short: the structured result has the full list. */
function listed(items: string[], max = 12): string {
  const shown = items.slice(0, max).join(", ");
  return items.length > max ? `${shown} and ${items.length - max} more` : shown;
}

function pct(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}

function verdictText(
  metric: string,
  a: string,
  b: string,
  ra: number,
  rb: number,
  test: ReturnType<typeof twoProportionTest>,
): string {
  if (test === null) return `Not enough data to compare ${metric} of ${a} and ${b}.`;
  if (ra === rb) return `${a} and ${b} have the same ${metric} (${pct(ra)}).`;
  const [hiName, loName, hiRate, loRate] = ra > rb ? [a, b, ra, rb] : [b, a, rb, ra];
  // "send groups" is a plural subject.
  const has = hiName === "send groups" ? "have" : "has";
  return test.significant
    ? `${hiName} ${has} a higher ${metric} than ${loName} (${pct(hiRate)} vs ${pct(loRate)}); the difference is significant at 95% (${formatP(test.p_value)}).`
    : `${hiName} ${has} a higher ${metric} than ${loName} (${pct(hiRate)} vs ${pct(loRate)}), but the difference is not significant at 95% (${formatP(test.p_value)}).`;
}

function compare(
  metric: Comparison["metric"],
  label: string,
  group: string,
  versus: string,
  x1: number,
  n1: number,
  x2: number,
  n2: number,
): Comparison {
  const test = twoProportionTest(x1, n1, x2, n2);
  const rate = round6(ratio(x1, n1));
  const versusRate = round6(ratio(x2, n2));
  return {
    metric,
    group,
    versus,
    rate,
    versus_rate: versusRate,
    z: test?.z ?? null,
    p_value: test?.p_value ?? null,
    significant: test?.significant ?? false,
    verdict: verdictText(label, group, versus, ratio(x1, n1), ratio(x2, n2), test),
  };
}

function abReadout(derived: RoundDerived[]): CampaignSummary["ab_test"] {
  const groups = new Map<
    string,
    {
      received: number;
      opened: number;
      openUsers: number;
      convertedOpeners: number;
      convertedReceived: number;
    }
  >();
  let controlAssigned = 0;
  let controlConverted = 0;
  let controlConversionRows = 0;
  for (const d of derived) {
    const name = d.round.group;
    if (name === CONTROL_GROUP) {
      controlAssigned += d.controlUsers;
      controlConverted += d.controlConverted;
      controlConversionRows += d.round.conversions;
      continue;
    }
    if (name === "") continue;
    const g = groups.get(name) ?? {
      received: 0,
      opened: 0,
      openUsers: 0,
      convertedOpeners: 0,
      convertedReceived: 0,
    };
    g.received += d.round.received_users;
    g.opened += d.openedReceived;
    g.openUsers += d.round.open_users;
    g.convertedOpeners += d.convertedOpeners;
    g.convertedReceived += d.convertedReceived;
    groups.set(name, g);
  }
  const names = [...groups.keys()].sort();
  const readouts = names.map((name) => {
    const g = groups.get(name) as NonNullable<ReturnType<typeof groups.get>>;
    return {
      group: name,
      received_users: g.received,
      opened_users: g.opened,
      open_rate_users: round6(ratio(g.opened, g.received)),
      open_users: g.openUsers,
      converted_openers: g.convertedOpeners,
      conversion_rate_by_opens: round6(ratio(g.convertedOpeners, g.openUsers)),
    };
  });
  const comparisons: Comparison[] = [];
  if (names.length >= 2) {
    // With two groups one comparison says it all; with more, each group against the rest.
    const subjects = names.length === 2 ? names.slice(0, 1) : names;
    for (const name of subjects) {
      const g = groups.get(name);
      if (g === undefined) continue;
      const others = names.filter((n) => n !== name);
      const rest = { received: 0, opened: 0, openUsers: 0, convertedOpeners: 0 };
      for (const o of others) {
        const og = groups.get(o);
        if (og === undefined) continue;
        rest.received += og.received;
        rest.opened += og.opened;
        rest.openUsers += og.openUsers;
        rest.convertedOpeners += og.convertedOpeners;
      }
      const versus = others.length === 1 ? (others[0] as string) : "the other groups";
      comparisons.push(
        compare(
          "open_rate",
          "open rate",
          name,
          versus,
          g.opened,
          g.received,
          rest.opened,
          rest.received,
        ),
        compare(
          "conversion_rate",
          "conversion rate by opens",
          name,
          versus,
          g.convertedOpeners,
          g.openUsers,
          rest.convertedOpeners,
          rest.openUsers,
        ),
      );
    }
  }
  let control: CampaignSummary["ab_test"]["control"] = null;
  if (controlAssigned > 0) {
    let receivedAll = 0;
    let convertedAll = 0;
    for (const g of groups.values()) {
      receivedAll += g.received;
      convertedAll += g.convertedReceived;
    }
    // Control users get no message, so they are compared per assigned user with send-group users
    // per received user: the lift of sending at all.
    const c = compare(
      "conversion_rate",
      "conversion rate per user",
      "send groups",
      CONTROL_GROUP,
      convertedAll,
      receivedAll,
      controlConverted,
      controlAssigned,
    );
    // Without conversion rows for the control group the file cannot tell how it did (the issue:
    // "the control group where the file has conversions for it"); 0% would be a false reading.
    const comparable = receivedAll > 0 && controlConversionRows > 0;
    control = {
      assigned_users: controlAssigned,
      converted_users: controlConverted,
      conversion_rate: round6(ratio(controlConverted, controlAssigned)),
      send_groups_conversion_rate: round6(ratio(convertedAll, receivedAll)),
      comparison: comparable ? withoutMetric(c) : null,
      note:
        controlConversionRows === 0
          ? `The file holds no conversion rows for the control group (${CONTROL_GROUP}), so it cannot be compared with the send groups.`
          : receivedAll === 0
            ? "No send-group user received a message, so the control group has nothing to be compared with."
            : "Send groups count conversions of users who received a message, the control group those of assigned users; both per user. If the service only exports conversions it credits to an opened message, send groups are favoured and the lift is overstated.",
    };
  }
  return { groups: readouts, comparisons, control };
}

function withoutMetric(c: Comparison): Omit<Comparison, "metric"> {
  const { metric: _metric, ...rest } = c;
  return rest;
}

function oneLine(s: CampaignSummary): string {
  const t = s.totals;
  const parts = [
    `${s.rows} rows, ${s.rounds.length} round(s)`,
    `${t.sent} sent, ${pct(t.success_rate)} delivered (${t.failed} failed, ${t.unsettled} unsettled)`,
    `open rate ${pct(t.open_rate)} (건) / ${pct(t.open_rate_users)} (명)`,
    `${t.conversions} conversions (${pct(t.conversion_rate)} of opens)`,
  ];
  const top = s.error_codes[0];
  if (top) parts.push(`top failure ${top.error_code} (${top.count})`);
  const winner = s.ab_test.comparisons.find((c) => c.metric === "open_rate");
  if (winner) parts.push(winner.verdict);
  return parts.join("; ");
}
