import { checkKeyLength, MAX_KEY_BYTES } from "./campaign-columns.js";
import { type CsvRecord, fieldEquals, fieldText } from "./csv-scanner.js";
import { AnalysisError } from "./errors.js";
import { safeText } from "./safe-text.js";

export interface Interned {
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
export class InternTable {
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
