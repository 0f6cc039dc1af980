import { open } from "node:fs/promises";
import { type CsvRecord, CsvScanError, CsvScanner } from "./csv-scanner.js";
import { AnalysisError } from "./errors.js";

/** Reading a campaign CSV, or a byte range of it, through the scanner. */

export const READ_CHUNK = 1 << 20;

export interface RangeEnd {
  /** the last byte read is a line break */
  endsWithNewline: boolean;
  /**
   * The range's end was not a record boundary (a quoted field went on across it): the read went
   * on to the end of the file (the ranges after this one were read here too) or, with `readOn:
   * false`, stopped there.
   */
  overran: boolean;
}

export interface ReadRangeOptions {
  signal?: AbortSignal | undefined;
  /** bytes per read (tests make it small to cross every state) */
  chunkBytes?: number | undefined;
  /**
   * When `end` is inside a record: false stops there and says so (`overran`) instead of reading
   * on to the end of the file.
   */
  readOn?: boolean | undefined;
  /**
   * Storage kept from one range to the next of a thread that reads many (see readBuffers): made
   * for the same `onRecord` and `chunkBytes`.
   */
  buffers?: ReadBuffers | undefined;
}

/**
 * The read buffers and the scanner, reused across the ranges one thread reads with one record
 * handler (the scanner is reset for each).
 */
export interface ReadBuffers {
  chunks: [Buffer, Buffer];
  scanner: CsvScanner;
}

export function readBuffers(
  onRecord: (rec: CsvRecord) => void,
  chunkBytes = READ_CHUNK,
): ReadBuffers {
  return {
    chunks: [Buffer.allocUnsafe(chunkBytes), Buffer.allocUnsafe(chunkBytes)],
    scanner: new CsvScanner(onRecord),
  };
}

/**
 * Feeds `onRecord` the records of `path` from byte `start` (a record start) to `end`. When `end`
 * is inside a record the read goes on to the end of the file and says so (`overran`). Scanner
 * errors become AnalysisErrors (their line numbers count from `start`).
 */
export async function readRange(
  path: string,
  start: number,
  end: number,
  onRecord: (rec: CsvRecord) => void,
  options: ReadRangeOptions = {},
): Promise<RangeEnd> {
  const chunkBytes = options.chunkBytes ?? READ_CHUNK;
  const reuse = options.buffers ?? readBuffers(onRecord, chunkBytes);
  const scanner = reuse.scanner;
  scanner.reset();
  let endsWithNewline = false;
  let overran = false;
  try {
    // Two reused read buffers: the next chunk is read (on libuv's thread pool) while this one is
    // scanned, so the scan does not wait for the disk; the scanner copies what it keeps, so
    // nothing is allocated per chunk.
    const handle = await open(path, "r");
    const buffers = reuse.chunks;
    let next = 0;
    let position = start;
    let limit = end;
    let pending: Promise<{ bytesRead: number }> | undefined;
    const readNext = (): Promise<{ bytesRead: number }> => {
      const want = Math.min(chunkBytes, limit - position);
      const read = handle.read(buffers[next] as Buffer, 0, Math.max(0, want), position);
      position += Math.max(0, want);
      return read;
    };
    try {
      pending = readNext();
      for (;;) {
        if (options.signal?.aborted) {
          throw new AnalysisError("The summary was cancelled.", "aborted");
        }
        let { bytesRead } = await pending;
        pending = undefined;
        if (bytesRead === 0 && limit !== Number.POSITIVE_INFINITY && !scanner.atRecordBoundary) {
          // The range ended inside a record: read on to the end of the file, or stop here.
          overran = true;
          if (options.readOn === false) break;
          limit = Number.POSITIVE_INFINITY;
          pending = readNext();
          ({ bytesRead } = await pending);
          pending = undefined;
        }
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
    // A range stopped inside a record leaves it unread: its reader's result is dropped.
    if (!(overran && options.readOn === false)) scanner.end();
  } catch (error) {
    if (error instanceof CsvScanError) {
      throw new AnalysisError(
        `The campaign CSV is malformed: ${error.message} Export the file again; if it keeps failing, the file was changed or damaged after download.`,
        "malformed_csv",
      );
    }
    throw error;
  }
  return { endsWithNewline, overran };
}
