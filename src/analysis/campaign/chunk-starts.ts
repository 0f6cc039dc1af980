import { open } from "node:fs/promises";
import { CsvScanError, CsvScanner } from "../csv/scanner.js";
import { COLUMN_COUNT } from "./columns.js";

/**
 * Where the chunks of a campaign CSV's threads start (tally-in-parallel.ts): after each cut
 * point, the first line start that rows of the campaign's width follow. A guess, which the reader
 * of the chunk before checks; a plain "first line break" guessed wrong whenever the cut fell
 * before a line break inside an error message, and the file was then read again in one pass.
 */

/** Bytes read after a cut point to find a record start (a cut with none in them is dropped). */
const LOOK_AHEAD = 1 << 16;
/** Rows of the campaign's width that must follow a line break taken as a record start. */
const ROWS_TO_TRUST = 16;
/** Bytes scanned at a time while counting them. */
const TRUST_SLICE = 1 << 12;

/** Counts the rows a scanner delivers, and whether the first ROWS_TO_TRUST have the width. */
class RowCheck {
  rows = 0;
  regular = true;
  readonly scanner = new CsvScanner((rec) => {
    if (this.rows < ROWS_TO_TRUST && rec.count !== COLUMN_COUNT) this.regular = false;
    this.rows++;
  });

  /**
   * True when the records of `text` (from a line start) begin with ROWS_TO_TRUST rows of the
   * campaign's columns and nothing malformed among them (or the text ends first, after at least
   * one). A line break inside a quoted field seldom passes: the rest of the field is followed by
   * its closing quote, which an unquoted field cannot hold.
   */
  rowsFollow(text: Buffer): boolean {
    this.scanner.reset();
    this.rows = 0;
    this.regular = true;
    try {
      for (let at = 0; at < text.length && this.rows < ROWS_TO_TRUST; at += TRUST_SLICE) {
        this.scanner.push(text.subarray(at, at + TRUST_SLICE));
      }
    } catch (error) {
      if (error instanceof CsvScanError) return false;
      throw error;
    }
    return this.regular && this.rows > 0;
  }
}

/** The starts of the ranges after the first, one per cut that has one: increasing, in the file. */
export async function rangeStarts(path: string, bytes: number, cuts: number[]): Promise<number[]> {
  const starts: number[] = [];
  const handle = await open(path, "r");
  try {
    const window = Buffer.allocUnsafe(LOOK_AHEAD);
    // One scanner for every candidate: a window may hold many line breaks inside quotes.
    const check = new RowCheck();
    for (const cut of cuts) {
      const from = Math.max(1, cut);
      if (from <= (starts.at(-1) ?? 0)) continue;
      const { bytesRead } = await handle.read(window, 0, window.length, from);
      const text = window.subarray(0, bytesRead);
      for (let lf = text.indexOf(0x0a); lf >= 0; lf = text.indexOf(0x0a, lf + 1)) {
        if (from + lf + 1 >= bytes) break;
        if (check.rowsFollow(text.subarray(lf + 1))) {
          starts.push(from + lf + 1);
          break;
        }
      }
    }
  } finally {
    await handle.close();
  }
  return starts;
}
