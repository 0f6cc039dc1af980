import { type FileHandle, open } from "node:fs/promises";
import { type CsvRecord, CsvScanError, CsvScanner } from "../csv/scanner.js";
import { AnalysisError } from "../errors.js";
import { ROW_KEY_FIELDS } from "./row-keys.js";

/** Reading a campaign CSV, or byte ranges of it, through the scanner. */

export const READ_CHUNK = 1 << 20;

export interface RangeEnd {
  /** the last byte read is a line break */
  endsWithNewline: boolean;
  /**
   * The range ends exactly at the end of a record: the range after it (if any) starts on a record
   * start. False when its end cut a record (a quoted field went on across it): the records of
   * the next range were then read from a wrong start.
   */
  atRecordBoundary: boolean;
}

export interface ReadRangeOptions {
  signal?: AbortSignal | undefined;
  /** bytes per read (tests make it small to cross every state) */
  chunkBytes?: number | undefined;
}

/**
 * Reads byte ranges of one file, each from a record start, into one record handler: one scanner,
 * file handle and pair of read buffers for all of a thread's ranges.
 */
export class RangeReader {
  private constructor(
    private readonly handle: FileHandle,
    private readonly scanner: CsvScanner,
    private readonly buffers: [Buffer, Buffer],
    private readonly options: ReadRangeOptions,
  ) {}

  static async open(
    path: string,
    onRecord: (rec: CsvRecord) => void,
    options: ReadRangeOptions = {},
  ): Promise<RangeReader> {
    const chunkBytes = options.chunkBytes ?? READ_CHUNK;
    // The round's three columns and the event type come first: the kernel hashes them (row-keys.ts).
    const scanner = new CsvScanner(onRecord, { keyFields: ROW_KEY_FIELDS });
    const handle = await open(path, "r");
    return new RangeReader(
      handle,
      scanner,
      [Buffer.allocUnsafe(chunkBytes), Buffer.allocUnsafe(chunkBytes)],
      options,
    );
  }

  /**
   * Feeds the records of bytes `[start, end)` (`start` a record start) to the handler. A range
   * that ends inside a record delivers the records before it and says so; its last record is
   * dropped. Scanner errors become AnalysisErrors (their line numbers count from `start`).
   */
  async read(start: number, end: number): Promise<RangeEnd> {
    const { handle, scanner, buffers, options } = this;
    const chunkBytes = buffers[0].length;
    scanner.reset();
    let endsWithNewline = false;
    try {
      // Two read buffers: the next chunk is read (on libuv's thread pool) while this one is
      // scanned, so the scan does not wait for the disk; the scanner copies what it keeps.
      let next = 0;
      let position = start;
      let pending: Promise<{ bytesRead: number }> | undefined;
      const readNext = (): Promise<{ bytesRead: number }> => {
        const want = Math.max(0, Math.min(chunkBytes, end - position));
        position += want;
        return handle.read(buffers[next] as Buffer, 0, want, position - want);
      };
      try {
        pending = readNext();
        for (;;) {
          if (options.signal?.aborted) {
            throw new AnalysisError("The summary was cancelled.", "aborted");
          }
          const { bytesRead } = await pending;
          pending = undefined;
          if (bytesRead === 0) break;
          const chunk = buffers[next] as Buffer;
          next ^= 1;
          pending = readNext();
          scanner.push(chunk.subarray(0, bytesRead));
          const lastByte = chunk[bytesRead - 1];
          endsWithNewline = lastByte === 0x0a || lastByte === 0x0d;
        }
      } finally {
        // A read still in flight (the scan failed or was cancelled) must finish first.
        if (pending !== undefined) await pending.catch(() => undefined);
      }
      const atRecordBoundary = scanner.atRecordBoundary;
      // The file's last record may lack its line break; a range's cut record is not a record.
      if (atRecordBoundary || end === Number.POSITIVE_INFINITY) scanner.end();
      return { endsWithNewline, atRecordBoundary };
    } catch (error) {
      if (error instanceof CsvScanError) {
        throw new AnalysisError(
          `The campaign CSV is malformed: ${error.message} Export the file again; if it keeps failing, the file was changed or damaged after download.`,
          "malformed_csv",
        );
      }
      throw error;
    }
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

/** Feeds `onRecord` the records of `path` from byte `start` (a record start) to `end`. */
export async function readRange(
  path: string,
  start: number,
  end: number,
  onRecord: (rec: CsvRecord) => void,
  options: ReadRangeOptions = {},
): Promise<RangeEnd> {
  const reader = await RangeReader.open(path, onRecord, options);
  try {
    return await reader.read(start, end);
  } finally {
    await reader.close();
  }
}
