import { isUtf8 } from "node:buffer";
import { KERNEL_FIELDS, MAX_WINDOW, SpecialsIndex } from "./specials.js";

/**
 * A byte-level streaming RFC 4180 scanner. csv-parse builds a JS string per field of every row;
 * this scanner only records where each field's bytes are and lets the caller decode the few
 * columns it needs. It does not read every byte either: the bytes that can end or open a field
 * are found 64 at a time in WebAssembly (specials.ts), which also reads each record of
 * unquoted fields whole; the state machine below reads the others, jumping from one such byte to
 * the next. csv-parse stays the oracle it is tested against.
 *
 * Accepted: quoted fields (with separators, CR/LF and doubled quotes inside), records ended by
 * LF, CRLF or a lone CR, a last record without a line ending. Rejected with the line number: a
 * quote inside an unquoted field, text after a closing quote, a quoted field still open at the
 * end of the input, invalid UTF-8, a field or record above the caps.
 */

export class CsvScanError extends Error {
  override name = "CsvScanError";
  constructor(
    message: string,
    /** 1-based physical line where the problem was found. */
    readonly line: number,
    readonly code:
      | "unmatched_quote"
      | "bad_quote"
      | "record_too_large"
      | "field_too_large"
      | "too_many_fields"
      | "invalid_utf8",
  ) {
    super(message);
  }
}

/**
 * One record, valid only during the callback (the scanner reuses it). Field `i` occupies
 * `buf[starts[i], ends[i])` without its surrounding quotes; `escaped[i]` is 1 when its bytes
 * still hold doubled quotes.
 */
export interface CsvRecord {
  buf: Buffer;
  /** a view of `buf`, to compare its bytes 4 at a time */
  view: DataView;
  count: number;
  starts: Int32Array;
  ends: Int32Array;
  escaped: Uint8Array;
  /** 1-based physical line where the record starts. */
  line: number;
  /**
   * True when `keyHash` holds the 64-bit hash (two halves) of the bytes of the record's first
   * `keyFields` fields (CsvScannerOptions), commas between them included: records of unquoted
   * fields only, read by the WebAssembly kernel. Equal bytes, equal hash; a caller may key a
   * lookup by it (see campaign/round-hash-table.ts) and must look records without it up otherwise.
   */
  keyHashed: boolean;
  keyHash: Int32Array;
}

export interface CsvScannerOptions {
  /** Largest field, in bytes. Default 1 MiB. */
  maxFieldBytes?: number;
  /** Largest record, in bytes. Default 4 MiB. */
  maxRecordBytes?: number;
  /** Most fields in one record. Default 256. */
  maxFields?: number;
  /** Fields whose bytes are hashed into CsvRecord.keyHash; default 0 (none). */
  keyFields?: number;
  /** Bytes scanned per internal call (see SCAN_SLICE); tests make it tiny to cross every state. */
  sliceBytes?: number;
}

const QUOTE = 0x22;
const COMMA = 0x2c;
const LF = 0x0a;
const CR = 0x0d;

// Where the scanner stands inside the current record between two chunks.
const FIELD_START = 0;
const UNQUOTED = 1;
const QUOTED = 2;
const QUOTE_SEEN = 3; // a quote inside a quoted field: either an escape or the closing quote
const AFTER_CLOSE = 4; // closing quote read, next must be a separator or line end
const AFTER_CR = 5; // record ended by CR; a following LF belongs to it

/**
 * Bytes one `scan` call reads before it returns to `push`. Short calls keep the scan loop out of
 * V8's on-stack replacement: a loop compiled while the first 1 MiB chunk is still running has no
 * type feedback for the code after it, and V8 may keep re-entering that compiled loop and
 * deoptimizing at its end on every chunk. With many short calls the function is compiled whole,
 * after every part of it has run.
 */
const SCAN_SLICE = 1 << 14;

/** Returns the field's text, with doubled quotes undone. The record's bytes are valid UTF-8. */
export function fieldText(rec: CsvRecord, i: number): string {
  const s = rec.starts[i] ?? 0;
  const e = rec.ends[i] ?? 0;
  if (e <= s) return "";
  const text = rec.buf.toString("utf8", s, e);
  return rec.escaped[i] === 1 ? text.replaceAll('""', '"') : text;
}

/**
 * True when `view` holds at `at` the first `n` bytes of `other`: 4 bytes at a time, a quarter of
 * the steps of a loop over single bytes.
 */
export function sameBytesAt(view: DataView, at: number, other: DataView, n: number): boolean {
  let k = 0;
  for (; k + 4 <= n; k += 4)
    if (view.getInt32(at + k, true) !== other.getInt32(k, true)) return false;
  for (; k < n; k++) if (view.getUint8(at + k) !== other.getUint8(k)) return false;
  return true;
}

export class CsvScanner {
  private readonly maxField: number;
  private readonly maxRecord: number;
  private readonly maxFields: number;
  private readonly slice: number;
  private readonly rec: CsvRecord;
  private readonly onRecord: (rec: CsvRecord) => void;
  private readonly specials = new SpecialsIndex();
  /** Whole records of unquoted fields are read by the WebAssembly kernel (see scan). */
  private readonly kernel: boolean;
  private readonly keyFields: number;

  /** Unfinished record carried over from the previous chunk (a view into `work`). */
  private carry: Buffer = Buffer.alloc(0);
  /** Reused buffer holding the carry followed by the new chunk, so pushes allocate nothing. */
  private work: Buffer = Buffer.alloc(0);
  private state = FIELD_START;
  /** Offset (in the carry) up to which the scan of the unfinished record has progressed. */
  private resumeAt = 0;
  /** Offset (in the data being scanned) where the current record starts, between slices. */
  private recordStart = 0;
  private fieldStart = 0;
  private fieldEscaped = 0;
  /** Physical line of the scan position and of the current record's start. */
  private line = 1;
  private recordLine = 1;
  /** Offset (in the carry) up to which bytes were already checked as UTF-8. */
  private validatedTo = 0;
  private ended = false;
  /** The data of the last viewOf call and its view. */
  private viewData: Buffer | undefined;
  private view: DataView = new DataView(new ArrayBuffer(0));

  constructor(onRecord: (rec: CsvRecord) => void, options: CsvScannerOptions = {}) {
    this.onRecord = onRecord;
    this.maxField = options.maxFieldBytes ?? 1 << 20;
    this.maxRecord = options.maxRecordBytes ?? 4 << 20;
    this.maxFields = options.maxFields ?? 256;
    this.slice = Math.min(MAX_WINDOW, Math.max(1, options.sliceBytes ?? SCAN_SLICE));
    // The record's fields live where the WebAssembly kernel writes them (see scan), unless more
    // fields are allowed than it has room for.
    this.kernel = this.maxFields <= KERNEL_FIELDS;
    const specials = this.specials;
    this.rec = {
      buf: this.carry,
      view: new DataView(new ArrayBuffer(0)),
      count: 0,
      starts: this.kernel ? specials.starts : new Int32Array(this.maxFields),
      ends: this.kernel ? specials.ends : new Int32Array(this.maxFields),
      escaped: this.kernel ? specials.escaped : new Uint8Array(this.maxFields),
      line: 1,
      keyHashed: false,
      keyHash: specials.read.subarray(2, 4),
    };
    this.keyFields = options.keyFields ?? 0;
  }

  /** Records delivered so far start on lines 1..`currentLine`; used for error messages. */
  get currentLine(): number {
    return this.line;
  }

  /**
   * True when the input so far ends exactly at the end of a record (its line ending included):
   * what follows starts a new record. A scanner that began at a record start knows this for
   * certain, quoted line breaks included; see campaign/tally-in-parallel.ts.
   */
  get atRecordBoundary(): boolean {
    return this.carry.length === 0 && this.state === FIELD_START && this.rec.count === 0;
  }

  /**
   * Makes the scanner new again for other input, which must start on a record start, keeping its
   * buffers and byte index (a scanner made per use allocates them every time).
   */
  reset(): void {
    this.carry = Buffer.alloc(0);
    this.state = FIELD_START;
    this.resumeAt = 0;
    this.recordStart = 0;
    this.fieldStart = 0;
    this.fieldEscaped = 0;
    this.line = 1;
    this.recordLine = 1;
    this.validatedTo = 0;
    this.ended = false;
    this.rec.count = 0;
    this.rec.keyHashed = false;
  }

  push(chunk: Buffer): void {
    if (this.ended) throw new Error("CsvScanner.push after end");
    if (chunk.length === 0) return;
    if (this.carry.length > 0) {
      // The record begun in the last chunk most likely ends at this chunk's first line break: it
      // alone is joined to the carry and scanned, and the rest, once the carry is empty, is read
      // where it lies. Joining the whole chunk copied every byte of the file once more.
      const lf = chunk.indexOf(LF);
      if (lf >= 0 && lf + 1 < chunk.length) {
        this.pushJoined(chunk.subarray(0, lf + 1));
        this.pushJoined(chunk.subarray(lf + 1));
        return;
      }
    }
    this.pushJoined(chunk);
  }

  /** Scans the carry and `chunk` (not empty) as one run of bytes. */
  private pushJoined(chunk: Buffer): void {
    const data = this.carry.length === 0 ? chunk : this.join(chunk);
    this.validate(data, data.lastIndexOf(LF) + 1);
    this.recordStart = 0;
    while (this.resumeAt < data.length) this.scan(data);
    const consumed = this.recordStart;
    this.moveToCarry(consumed);
    // Records ended by a lone CR may reach past the last LF; CR is a character boundary too.
    if (consumed > this.validatedTo) this.validate(data, consumed);
    this.keepCarry(data, consumed);
    this.validatedTo = Math.max(0, this.validatedTo - consumed);
    if (this.carry.length > this.maxRecord) {
      throw new CsvScanError(
        `The record starting at line ${this.recordLine} is larger than ${this.maxRecord} bytes.`,
        this.recordLine,
        "record_too_large",
      );
    }
  }

  private join(chunk: Buffer): Buffer {
    const carryLength = this.carry.length;
    const need = carryLength + chunk.length;
    if (this.work.length < need) {
      const bigger = Buffer.allocUnsafe(Math.max(need, this.work.length * 2, 1 << 16));
      this.carry.copy(bigger, 0);
      this.work = bigger;
    } else if (
      this.carry.buffer !== this.work.buffer ||
      this.carry.byteOffset !== this.work.byteOffset
    ) {
      this.work.set(this.carry, 0); // the carry sits at the start of `work` once it lives there
    }
    chunk.copy(this.work, carryLength);
    return this.work.subarray(0, need);
  }

  private keepCarry(data: Buffer, consumed: number): void {
    const rest = data.length - consumed;
    if (rest === 0) {
      this.carry = Buffer.alloc(0);
      return;
    }
    if (this.work.length < rest) this.work = Buffer.allocUnsafe(Math.max(rest, 1 << 16));
    // copyWithin handles the overlap when `data` is `work` itself.
    if (data.buffer === this.work.buffer && data.byteOffset === this.work.byteOffset) {
      this.work.copyWithin(0, consumed, data.length);
    } else {
      data.copy(this.work, 0, consumed);
    }
    this.carry = this.work.subarray(0, rest);
  }

  /** Finishes the input: delivers a last record without a line ending, or reports an open quote. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    const data = this.carry;
    this.validate(data, data.length);
    this.recordStart = 0;
    while (this.resumeAt < data.length) this.scan(data);
    this.finishLast(data);
    this.carry = Buffer.alloc(0);
  }

  /**
   * Checks new bytes up to `upTo` with the native validator. Callers pass a character boundary:
   * the byte after an LF or CR (neither occurs inside a UTF-8 sequence) or the end of input.
   */
  private validate(data: Buffer, upTo: number): void {
    if (upTo <= this.validatedTo) return;
    const region = data.subarray(this.validatedTo, upTo);
    if (!isUtf8(region)) {
      // Locate the line: the carry before `validatedTo` starts at the current record's line.
      let line = this.recordLine;
      for (let k = 0; k < this.validatedTo; k++) if (data[k] === LF) line++;
      let from = 0;
      while (from < region.length) {
        let nl = region.indexOf(LF, from);
        if (nl < 0) nl = region.length - 1;
        if (!isUtf8(region.subarray(from, nl + 1))) break;
        line++;
        from = nl + 1;
      }
      throw new CsvScanError(`Line ${line} is not valid UTF-8 text.`, line, "invalid_utf8");
    }
    this.validatedTo = upTo;
  }

  private fail(code: CsvScanError["code"], message: string, line: number): never {
    throw new CsvScanError(message, line, code);
  }

  private tooManyFields(line: number): never {
    this.fail("too_many_fields", `Line ${line} has more than ${this.maxFields} fields.`, line);
  }

  private fieldTooLarge(line: number): never {
    this.fail(
      "field_too_large",
      `A field on line ${line} is larger than ${this.maxField} bytes.`,
      line,
    );
  }

  /**
   * Scans the next slice of `data` (see SCAN_SLICE) from `resumeAt` and keeps where it stopped;
   * `recordStart` then tells how many leading bytes belong to records already delivered. Offsets
   * are in `data` until `moveToCarry` or `finishLast` runs after the last slice.
   */
  private scan(data: Buffer): void {
    const rec = this.rec;
    rec.buf = data;
    rec.view = this.viewOf(data);
    const starts = rec.starts;
    const ends = rec.ends;
    const escaped = rec.escaped;
    const maxFields = this.maxFields;
    let state = this.state;
    let i = this.resumeAt;
    let fieldStart = this.fieldStart;
    let fieldEscaped = this.fieldEscaped;
    let count = rec.count;
    let line = this.line;
    let recordStart = this.recordStart;
    let recordLine = this.recordLine;
    const to = Math.min(data.length, i + this.slice);
    // The special bytes of this slice: `at[k]` is always the first one at or after `i`, so every
    // state below finds the byte that ends its field without reading the bytes between.
    const from = i;
    const specials = this.specials;
    const found = specials.index(data, i, to);
    const at = specials.positions;
    const readRecord = specials.record;
    const read = specials.read;
    const kernel = this.kernel;
    const keyFields = this.keyFields;
    let keyedStart = -1;
    let k = 0;

    // The field and record ends below are written out where they happen, not as closures: a
    // closure that writes `count` or `fieldStart` would move them out of registers into a heap
    // context for the whole loop.
    const maxField = this.maxField;
    const onRecord = this.onRecord;

    while (i < to) {
      switch (state) {
        case FIELD_START: {
          if (count === 0 && kernel) {
            // Whole records of unquoted fields (most rows), one kernel call each; the first record
            // it declines (a quote, a lone CR, the slice's end) is read below.
            let next = readRecord(k, found, from, i, maxFields, maxField, keyFields);
            while (next >= 0) {
              rec.count = read[0] as number;
              rec.line = recordLine;
              rec.keyHashed = true;
              onRecord(rec);
              rec.keyHashed = false;
              k = next;
              i = read[1] as number;
              line++;
              recordStart = i;
              recordLine = line;
              if (i >= to) break;
              next = readRecord(k, found, from, i, maxFields, maxField, keyFields);
            }
            if (i >= to) break;
            // Declined, perhaps after hashing the key (unquoted key fields, a quoted field later):
            // the hash holds for this record if it ends in this slice.
            keyedStart = ((read[2] as number) | (read[3] as number)) !== 0 ? i : -1;
          }
          if (data[i] === QUOTE) {
            state = QUOTED;
            fieldStart = i + 1;
            fieldEscaped = 0;
            i++;
            k++;
          } else {
            fieldStart = i;
            fieldEscaped = 0;
            state = UNQUOTED;
          }
          break;
        }
        case UNQUOTED: {
          // Most rows have no quoted field: the fields after this one are read here, from one
          // comma to the next, without a trip through the switch per field.
          let b = 0;
          for (;;) {
            if (k >= found) {
              b = -1; // the field goes on past this slice
              break;
            }
            i = at[k] as number;
            k++;
            b = data[i] as number;
            if (b !== COMMA) break;
            if (count >= maxFields) this.tooManyFields(recordLine);
            if (i - fieldStart > maxField) this.fieldTooLarge(recordLine);
            starts[count] = fieldStart;
            ends[count] = i;
            escaped[count] = 0;
            count++;
            i++;
            if (i >= to || data[i] === QUOTE) break;
            fieldStart = i;
          }
          if (b === -1) {
            i = to;
            break;
          }
          if (b === COMMA) {
            state = FIELD_START; // a quoted field, or the slice's end
            break;
          }
          if (b === QUOTE) {
            this.fail(
              "bad_quote",
              `Line ${line} has a quote inside an unquoted field; quotes must enclose the whole field.`,
              line,
            );
          }
          // A line break ends the field and the record.
          if (count >= maxFields) this.tooManyFields(recordLine);
          if (i - fieldStart > maxField) this.fieldTooLarge(recordLine);
          starts[count] = fieldStart;
          ends[count] = i;
          escaped[count] = 0;
          count++;
          rec.count = count;
          rec.line = recordLine;
          rec.keyHashed = recordStart === keyedStart;
          onRecord(rec);
          rec.keyHashed = false;
          count = 0;
          i++;
          if (b === LF) {
            line++;
            state = FIELD_START;
          } else {
            state = AFTER_CR;
          }
          recordStart = i;
          recordLine = line;
          break;
        }
        case QUOTED: {
          // Separators inside the quotes are skipped; line breaks are counted so that error
          // messages name the physical line.
          let b = 0;
          while (k < found) {
            b = data[at[k] as number] as number;
            if (b === QUOTE) break;
            if (b === LF) line++;
            k++;
          }
          if (k >= found) {
            if (to - fieldStart > maxField) this.fieldTooLarge(recordLine);
            i = to;
            break;
          }
          const q = at[k] as number;
          if (q - fieldStart > maxField) this.fieldTooLarge(recordLine);
          k++;
          i = q + 1;
          state = QUOTE_SEEN;
          break;
        }
        case QUOTE_SEEN: {
          if (data[i] === QUOTE) {
            fieldEscaped = 1;
            state = QUOTED;
            i++;
            k++;
          } else {
            if (count >= maxFields) this.tooManyFields(recordLine);
            if (i - 1 - fieldStart > maxField) this.fieldTooLarge(recordLine);
            starts[count] = fieldStart;
            ends[count] = i - 1;
            escaped[count] = fieldEscaped;
            count++;
            state = AFTER_CLOSE;
          }
          break;
        }
        case AFTER_CLOSE: {
          const b = data[i];
          if (b === COMMA) {
            state = FIELD_START;
            i++;
            k++;
          } else if (b === LF || b === CR) {
            rec.count = count;
            rec.line = recordLine;
            rec.keyHashed = recordStart === keyedStart;
            onRecord(rec);
            rec.keyHashed = false;
            count = 0;
            i++;
            k++;
            if (b === LF) {
              line++;
              state = FIELD_START;
            } else {
              state = AFTER_CR;
            }
            recordStart = i;
            recordLine = line;
          } else {
            this.fail(
              "bad_quote",
              `Line ${line} has text right after a closing quote; a quoted field must be followed by a comma or a line end.`,
              line,
            );
          }
          // A comma after a closing quote starts the next field; fieldStart is set there.
          break;
        }
        case AFTER_CR: {
          if (data[i] === LF) {
            line++;
            i++;
            k++;
            recordStart = i;
            recordLine = line;
          } else {
            // A lone CR ended the record (old Mac style); it counts as a line break.
            line++;
            recordLine = line;
          }
          state = FIELD_START;
          break;
        }
      }
    }

    this.state = state;
    this.resumeAt = i;
    this.recordStart = recordStart;
    this.fieldStart = fieldStart;
    this.fieldEscaped = fieldEscaped;
    rec.count = count;
    this.line = line;
    this.recordLine = recordLine;
  }

  /** A view of the data being scanned, made once per push (the scan runs per slice). */
  private viewOf(data: Buffer): DataView {
    if (data !== this.viewData) {
      this.viewData = data;
      this.view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    }
    return this.view;
  }

  /** The data ended mid-record: its offsets move down by `consumed` as it becomes the carry. */
  private moveToCarry(consumed: number): void {
    if (consumed > 0) {
      const rec = this.rec;
      for (let k = 0; k < rec.count; k++) {
        rec.starts[k] = (rec.starts[k] ?? 0) - consumed;
        rec.ends[k] = (rec.ends[k] ?? 0) - consumed;
      }
    }
    this.resumeAt -= consumed;
    this.fieldStart -= consumed;
    this.recordStart = 0;
  }

  /** End of input: closes the last record's last field and delivers it, or reports an open quote. */
  private finishLast(data: Buffer): void {
    const rec = this.rec;
    rec.buf = data;
    rec.view = this.viewOf(data);
    const len = data.length;
    const starts = rec.starts;
    const ends = rec.ends;
    const escaped = rec.escaped;
    const maxFields = this.maxFields;
    const maxField = this.maxField;
    const state = this.state;
    const recordLine = this.recordLine;
    let count = rec.count;
    let fieldStart = this.fieldStart;
    let fieldEscaped = this.fieldEscaped;
    // The last record has no line ending: close its last field and deliver it.
    let lastEnd = -1;
    switch (state) {
      case QUOTED:
        this.fail(
          "unmatched_quote",
          `The quoted field that starts on line ${recordLine} is never closed: the file ends inside quotes (it may be truncated, or a quote is unmatched).`,
          recordLine,
        );
        break;
      case QUOTE_SEEN:
        lastEnd = len - 1;
        break;
      case UNQUOTED:
        lastEnd = len;
        break;
      case FIELD_START:
        // Input ended right after a comma: that record's last field is empty.
        if (count > 0) {
          fieldStart = len;
          fieldEscaped = 0;
          lastEnd = len;
        }
        break;
      default:
        break;
    }
    if (lastEnd >= 0) {
      if (count >= maxFields) this.tooManyFields(recordLine);
      if (lastEnd - fieldStart > maxField) this.fieldTooLarge(recordLine);
      starts[count] = fieldStart;
      ends[count] = lastEnd;
      escaped[count] = fieldEscaped;
      count++;
    }
    if (lastEnd >= 0 || state === AFTER_CLOSE) {
      rec.count = count;
      rec.line = recordLine;
      this.onRecord(rec);
    }
    this.state = FIELD_START;
    this.resumeAt = 0;
    this.recordStart = 0;
    rec.count = 0;
  }
}
