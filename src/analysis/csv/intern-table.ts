import { checkKeyLength, MAX_KEY_BYTES } from "../campaign/columns.js";
import { AnalysisError } from "../errors.js";
import { safeText } from "../safe-text.js";
import { type CsvRecord, fieldText, sameBytesAt } from "./scanner.js";

export interface Interned {
  /** the value's bytes as a view and their length, compared with a row's field (sameField) */
  view: DataView;
  length: number;
  /** The value as written (compared with inputs). */
  name: string;
  /** The value made safe to show (see safe-text.ts). */
  shown: string;
  id: number;
}

/** Slots of the direct-mapped cache in front of the item list (a power of two). */
export const CACHE_SLOTS = 256;

/** A cheap hash of the field's length and up to three of its bytes: a cache slot, not an identity. */
export function quickSlot(rec: CsvRecord, col: number): number {
  const s = rec.starts[col] as number;
  const len = (rec.ends[col] as number) - s;
  if (len <= 0) return 0;
  const buf = rec.buf;
  return (
    (len * 31 +
      (buf[s] as number) * 7 +
      (buf[s + (len >> 1)] as number) * 3 +
      (buf[s + len - 1] as number)) &
    (CACHE_SLOTS - 1)
  );
}

/** True when field `col` of the row is exactly the item's bytes (not escaped). */
export function sameField(
  rec: CsvRecord,
  col: number,
  item: Pick<Interned, "view" | "length">,
): boolean {
  const s = rec.starts[col] as number;
  return (
    (rec.ends[col] as number) - s === item.length &&
    rec.escaped[col] !== 1 &&
    sameBytesAt(rec.view, s, item.view, item.length)
  );
}

/** Maps a column's distinct byte values to small ids without decoding every row. */
export class InternTable {
  readonly items: Interned[] = [];
  /**
   * quickSlot -> the entry last seen there: one array load and a byte compare per row, where a
   * Map probe or a scan of the items would cost more (event types alternate row by row).
   */
  private readonly cache: (Interned | undefined)[] = new Array<Interned | undefined>(
    CACHE_SLOTS,
  ).fill(undefined);
  private last: Interned | undefined;
  constructor(
    private readonly cap: number,
    private readonly what: string,
  ) {}

  /**
   * Small on purpose: the row handler inlines it, and V8 gives each optimized function a fixed
   * budget of inlined code; with the cache probe and the items' scan written here, the map update
   * no longer fit in it.
   */
  lookup(rec: CsvRecord, col: number): Interned {
    const last = this.last;
    return last !== undefined && sameField(rec, col, last) ? last : this.lookupOther(rec, col);
  }

  private lookupOther(rec: CsvRecord, col: number): Interned {
    const slot = quickSlot(rec, col);
    const hit = this.cache[slot];
    if (hit !== undefined && sameField(rec, col, hit)) {
      this.last = hit;
      return hit;
    }
    for (const item of this.items) {
      if (sameField(rec, col, item)) {
        this.last = item;
        this.cache[slot] = item;
        return item;
      }
    }
    checkKeyLength(rec, col, this.what);
    // Escaped values compare by text; they are rare enough not to matter for speed.
    const item = this.intern(fieldText(rec, col), `Line ${rec.line}: more`);
    this.cache[slot] = item;
    this.last = item;
    return item;
  }

  /** The value's entry, added when new; `where` opens the error when the cap is passed. */
  intern(name: string, where = "More"): Interned {
    const existing = this.items.find((item) => item.name === name);
    if (existing !== undefined) return existing;
    if (this.items.length >= this.cap) {
      throw new AnalysisError(
        `${where} than ${this.cap} distinct ${this.what} values; this does not look like a campaign export from the service.`,
        "not_campaign_export",
      );
    }
    const bytes = Buffer.from(name, "utf8");
    const item: Interned = {
      view: new DataView(bytes.buffer, bytes.byteOffset, bytes.length),
      length: bytes.length,
      name,
      shown: safeText(name, MAX_KEY_BYTES),
      id: this.items.length,
    };
    this.items.push(item);
    return item;
  }
}
