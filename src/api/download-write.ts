import type { FileHandle } from "node:fs/promises";
import { Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { Dispatcher } from "undici";
import { redact } from "../redact.js";
import { ApiError, DownloadFailedError } from "./errors.js";
import { errorCode } from "./to-api-error.js";

/**
 * Writing a download's body into its temporary file: bounded in size, the body paused whenever
 * the disk is behind, a local disk failure told apart from the network's.
 */

/**
 * What the file sink takes before it tells the body to wait. Together with the body's own buffer
 * (undici's 64 KiB) and the socket's, a download holds about 1.2 MiB in memory at most, under
 * 2 MiB whatever the file's size and however slow the disk: a slower disk makes the download
 * slower (the host's sending waits on TCP), never failed.
 */
export const SINK_BUFFER_BYTES = 1024 * 1024;

/** Writes chunks at the file's current position; a test passes a slower one for a slow disk. */
export type WriteChunks = (file: FileHandle, chunks: Buffer[]) => Promise<void>;

export const writeChunks: WriteChunks = async (file, chunks) => {
  let rest = chunks;
  // writev may write less than asked (a disk filling up): the rest is written again, and a full
  // disk then fails with ENOSPC instead of leaving a silent gap.
  while (rest.length > 0) {
    const { bytesWritten } = await file.writev(rest);
    rest = dropBytes(rest, bytesWritten);
  }
};

function dropBytes(chunks: Buffer[], count: number): Buffer[] {
  let left = count;
  let index = 0;
  while (index < chunks.length && left >= (chunks[index]?.length ?? 0)) {
    left -= chunks[index]?.length ?? 0;
    index++;
  }
  const rest = chunks.slice(index);
  const first = rest[0];
  if (first !== undefined && left > 0) rest[0] = first.subarray(left);
  return rest;
}

export function failed(message: string, status?: number): DownloadFailedError {
  return new DownloadFailedError(message, { operation: "download_export", status });
}

/**
 * Runs one file-system step; its failure (no space, no permission, a name too long) is a local
 * problem and must not be reported as the service being unreachable.
 */
export async function onDisk<T>(directory: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    const code = errorCode(error) ?? "error";
    throw new DownloadFailedError(
      `Could not write the export to ${redact(directory)}: ${code}. Check CRM_DATA_DIR (free space, permissions).`,
      { operation: "download_export", code },
    );
  }
}

/** The response body failed (a cut connection, an abort) after `bytes` arrived. */
export class BodyBroke extends Error {
  constructor(
    readonly bytes: number,
    override readonly cause: unknown,
  ) {
    super("the response body broke off");
  }
}

export interface FileTarget {
  handle: FileHandle;
  /** Shown in a disk error (redacted). */
  directory: string;
  write?: WriteChunks | undefined;
}

/**
 * Streams the body into the already open file through a pipeline: the body is read only as fast
 * as the file takes it (undici 8 pauses its HTTP/1 parser, and a host that closes the connection
 * meanwhile ends the body normally or with an error, nodejs/undici#5474). Resolves with the
 * bytes written, once they are synced; the caller closes and removes the file on failure.
 */
export async function streamToFile(
  body: Dispatcher.ResponseData["body"],
  target: FileTarget,
  maxBytes: number,
  expected: number | undefined,
  onProgress: ((bytes: number) => void) | undefined,
): Promise<number> {
  const write = target.write ?? writeChunks;
  let received = 0;
  let written = 0;
  async function* checked(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const chunk of source) {
      received += chunk.length;
      if (received > maxBytes) {
        throw failed(
          `The download exceeded the ${maxBytes}-byte limit (CRM_MAX_DOWNLOAD_MB); nothing was kept.`,
        );
      }
      if (expected !== undefined && received > expected) {
        throw failed(
          `The download is larger than the ${expected} bytes the export job announced; nothing was kept.`,
        );
      }
      yield chunk;
    }
    if (expected !== undefined && received !== expected) {
      throw failed(
        `The download ended after ${received} of the ${expected} bytes the export job announced; nothing was kept.`,
      );
    }
  }
  const sink = new Writable({
    highWaterMark: SINK_BUFFER_BYTES,
    writev(entries, callback) {
      const chunks = entries.map((entry) => entry.chunk as Buffer);
      onDisk(target.directory, () => write(target.handle, chunks)).then(() => {
        for (const chunk of chunks) written += chunk.length;
        onProgress?.(written);
        callback();
      }, callback);
    },
    final(callback) {
      onDisk(target.directory, () => target.handle.sync()).then(() => callback(), callback);
    },
  });
  try {
    await pipeline(body, checked, sink);
  } catch (error) {
    // The checks and the disk fail with the download's own errors; anything else came from the
    // body (a cut connection, a timeout, the caller's abort). Bytes still in the body's buffer
    // (waiting for the disk) had arrived too: they count in how far the download got.
    if (error instanceof ApiError) throw error;
    throw new BodyBroke(received + body.readableLength, error);
  }
  return written;
}
