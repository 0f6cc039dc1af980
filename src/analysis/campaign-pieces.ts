import { open } from "node:fs/promises";
import { COLUMN_COUNT } from "./campaign-columns.js";
import { type RangeEnd, READ_CHUNK, readBuffers, readRange } from "./campaign-read.js";
import { rowHandler } from "./campaign-row-pass.js";
import type { CampaignTally } from "./campaign-tally.js";
import { CsvScanError, CsvScanner } from "./csv-scanner.js";

/**
 * The pieces a campaign CSV is cut into for its threads, and the loop each thread runs: take a
 * piece nobody has taken, read it into the thread's own tally, until none is left. A thread that
 * frees up takes another piece, so the threads end within about a piece of each other whatever
 * the mix of rows in each part of the file (an open costs more than a send) and however late a
 * worker thread started; with one range per thread the last to finish was 6-117 ms behind the
 * other on the bench's files. This thread takes pieces from the front of the file, the workers
 * from the back: each thread's pieces stay next to each other, so each sees about the rounds of
 * its own part of the file (pieces taken in turn gave every thread every round's users, 25 MB
 * more memory and a longer merge).
 */

export interface Pieces {
  /**
   * Where each piece starts: 0, then a record start after each cut point, increasing (a guess
   * checked by the reader of the piece before: see campaign-parallel.ts). Piece p ends where
   * piece p + 1 starts, the last at the end of the file.
   */
  starts: number[];
  /** The pieces not yet taken, shared by the threads: see untaken and takePiece. */
  untaken: Int32Array;
}

/** A shared record of the pieces [first, end) not yet taken: both in one int32 for Atomics. */
export function untaken(first: number, end: number): Int32Array {
  if (end > 0xffff) throw new RangeError(`${end} pieces`);
  const shared = new Int32Array(new SharedArrayBuffer(4));
  shared[0] = (first << 16) | end;
  return shared;
}

/** Takes the first (or last) untaken piece; -1 when none is left. */
export function takePiece(pieces: Int32Array, fromBack: boolean): number {
  for (;;) {
    const now = Atomics.load(pieces, 0);
    const first = now >>> 16;
    const end = now & 0xffff;
    if (first >= end) return -1;
    const taken = fromBack ? (first << 16) | (end - 1) : ((first + 1) << 16) | end;
    if (Atomics.compareExchange(pieces, 0, now, taken) === now) return fromBack ? end - 1 : first;
  }
}

/** Leaves no piece for anybody to take (the threads stop after their current piece). */
export function takeNoMore(pieces: Int32Array): void {
  Atomics.store(pieces, 0, 0);
}

export interface PiecesRead {
  /** How the file's last piece ended, when this thread read it. */
  last: RangeEnd | undefined;
  /**
   * A piece did not end on a record boundary (its next piece's start was inside a quoted field):
   * the pieces read from that start are wrong, so the file must be read in one pass.
   */
  overran: boolean;
}

/** Piece sizes: small enough that the threads end close together, big enough to start fast. */
const MIN_PIECE = 4 << 20;
const MAX_PIECE = 16 << 20;
const PIECES_PER_THREAD = 16;

/** The cut points of a file of `bytes` read by `threads` threads (before the line starts). */
export function pieceCuts(bytes: number, threads: number): number[] {
  // At least one piece per thread, however small the file (the caller asked for the threads).
  const size = Math.min(
    Math.ceil(bytes / threads),
    Math.min(MAX_PIECE, Math.max(MIN_PIECE, Math.ceil(bytes / (threads * PIECES_PER_THREAD)))),
  );
  const cuts: number[] = [];
  for (let at = size; at < bytes; at += size) cuts.push(at);
  return cuts;
}

/** Bytes read after a cut point to find a record start there. */
const LOOK_AHEAD = 1 << 18;
/** Whole rows of the campaign's width that must follow a line break taken as a record start. */
const ROWS_TO_TRUST = 3;

/**
 * True when the records of `bytes` (from a line start, the last perhaps cut off) begin with
 * ROWS_TO_TRUST rows of the campaign's columns and nothing malformed. A line break inside a
 * quoted field (an error message may hold one) fails this at once: the rest of the message is
 * followed by a closing quote, which an unquoted field cannot hold.
 */
function rowsStartAt(bytes: Buffer): boolean {
  let rows = 0;
  let regular = true;
  const scanner = new CsvScanner((rec) => {
    if (rec.count !== COLUMN_COUNT) regular = false;
    rows++;
  });
  try {
    scanner.push(bytes);
  } catch (error) {
    if (error instanceof CsvScanError) return false;
    throw error;
  }
  return regular && rows >= ROWS_TO_TRUST;
}

/**
 * Where the pieces start: 0, then for each cut the first line start after it that rows of the
 * campaign's width follow (a guess the reader of the piece before checks: see
 * campaign-parallel.ts); a cut with no such line start near it is dropped. Increasing.
 */
export async function pieceStarts(path: string, bytes: number, cuts: number[]): Promise<number[]> {
  const starts = [0];
  const handle = await open(path, "r");
  try {
    const window = Buffer.allocUnsafe(LOOK_AHEAD);
    for (const cut of cuts) {
      const from = Math.max(1, cut);
      if (from <= (starts.at(-1) as number)) continue;
      const { bytesRead } = await handle.read(window, 0, window.length, from);
      const text = window.subarray(0, bytesRead);
      for (let lf = text.indexOf(0x0a); lf >= 0; lf = text.indexOf(0x0a, lf + 1)) {
        if (from + lf + 1 >= bytes) break;
        if (rowsStartAt(text.subarray(lf + 1))) {
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

/**
 * Reads pieces into `t`, taking them from the front or the back, until none is left. Errors are thrown with line numbers that count from
 * their piece's start: the caller reads the file again in one pass for the exact message.
 */
export async function readPieces(
  path: string,
  pieces: Pieces,
  t: CampaignTally,
  conversionType: string | undefined,
  fromBack: boolean,
  options: { signal?: AbortSignal | undefined; chunkBytes?: number | undefined } = {},
): Promise<PiecesRead> {
  const { starts } = pieces;
  const onRecord = rowHandler(t, conversionType, false);
  const buffers = readBuffers(onRecord, options.chunkBytes ?? READ_CHUNK);
  let last: RangeEnd | undefined;
  for (;;) {
    const p = takePiece(pieces.untaken, fromBack);
    if (p < 0) return { last, overran: false };
    const end = await readRange(path, starts[p] as number, starts[p + 1] ?? Infinity, onRecord, {
      signal: options.signal,
      chunkBytes: options.chunkBytes,
      readOn: false,
      buffers,
    });
    if (end.overran) {
      takeNoMore(pieces.untaken);
      return { last, overran: true };
    }
    if (p === starts.length - 1) last = end;
  }
}
