import { open } from "node:fs/promises";
import { type CsvRecord, CsvScanError, CsvScanner } from "./csv-scanner.js";
import { AnalysisError } from "./errors.js";
import { ROW_KEY_FIELDS } from "./row-keys.js";

/** Reading a campaign CSV, or a byte range of it, through the scanner. */

export const READ_CHUNK = 1 << 20;

export interface RangeEnd {
  /** the last byte read is a line break */
  endsWithNewline: boolean;
  /**
   * The range's end was not a record boundary (a quoted field went on across it), so the read
   * went on to the end of the file: the ranges after this one were read here too.
   */
  overran: boolean;
}

export interface ReadRangeOptions {
  signal?: AbortSignal | undefined;
  /** bytes per read (tests make it small to cross every state) */
  chunkBytes?: number | undefined;
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
  // The round's three columns and the event type come first: the kernel hashes them (row-keys.ts).
  const scanner = new CsvScanner(onRecord, { keyFields: ROW_KEY_FIELDS });
  let endsWithNewline = false;
  let overran = false;
  try {
    // Two reused read buffers: the next chunk is read (on libuv's thread pool) while this one is
    // scanned, so the scan does not wait for the disk; the scanner copies what it keeps, so
    // nothing is allocated per chunk.
    const handle = await open(path, "r");
    const buffers = [Buffer.allocUnsafe(chunkBytes), Buffer.allocUnsafe(chunkBytes)];
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
          // The range ended inside a record: read on to the end of the file.
          overran = true;
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
  return { endsWithNewline, overran };
}
