import { open } from "node:fs/promises";
import { COLUMN_COUNT } from "./campaign-columns.js";
import { CsvScanError, CsvScanner } from "./csv-scanner.js";

/**
 * Where the byte ranges of a campaign CSV's threads start (campaign-parallel.ts): after each cut
 * point, the first line start that rows of the campaign's width follow. A guess, which the reader
 * of the range before checks; a plain "first line break" guessed wrong whenever the cut fell
 * before a line break inside an error message, and the first thread then read the rest of the
 * file alone.
 */

/** Bytes read after a cut point to find a record start (a cut with none in them is dropped). */
const LOOK_AHEAD = 1 << 16;
/** Rows of the campaign's width that must follow a line break taken as a record start. */
const ROWS_TO_TRUST = 16;
/** Bytes scanned at a time while counting them. */
const TRUST_SLICE = 1 << 12;

/**
 * True when the records of `text` (from a line start) begin with ROWS_TO_TRUST rows of the
 * campaign's columns and nothing malformed among them (or the text ends first, after at least
 * one). A line break inside a quoted field seldom passes: the rest of the field is followed by
 * its closing quote, which an unquoted field cannot hold.
 */
function rowsFollow(text: Buffer): boolean {
  let rows = 0;
  let regular = true;
  const scanner = new CsvScanner((rec) => {
    if (rows < ROWS_TO_TRUST && rec.count !== COLUMN_COUNT) regular = false;
    rows++;
  });
  try {
    for (let at = 0; at < text.length && rows < ROWS_TO_TRUST; at += TRUST_SLICE) {
      scanner.push(text.subarray(at, at + TRUST_SLICE));
    }
  } catch (error) {
    if (error instanceof CsvScanError) return false;
    throw error;
  }
  return regular && rows > 0;
}

/** The starts of the ranges after the first, one per cut that has one: increasing, in the file. */
export async function rangeStarts(path: string, bytes: number, cuts: number[]): Promise<number[]> {
  const starts: number[] = [];
  const handle = await open(path, "r");
  try {
    const window = Buffer.allocUnsafe(LOOK_AHEAD);
    for (const cut of cuts) {
      const from = Math.max(1, cut);
      if (from <= (starts.at(-1) ?? 0)) continue;
      const { bytesRead } = await handle.read(window, 0, window.length, from);
      const text = window.subarray(0, bytesRead);
      for (let lf = text.indexOf(0x0a); lf >= 0; lf = text.indexOf(0x0a, lf + 1)) {
        if (from + lf + 1 >= bytes) break;
        if (rowsFollow(text.subarray(lf + 1))) {
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
