import type { FileHandle } from "node:fs/promises";
import type { Dispatcher } from "undici";
import { redact } from "../redact.js";
import { DownloadFailedError } from "./errors.js";
import { errorCode } from "./to-api-error.js";

/**
 * Writing a download's body into its temporary file: bounded in size and in bytes not yet on
 * disk, a local disk failure told apart from the network's.
 */

/**
 * Bytes received but not yet on disk. The body is never paused (see streamToFile), so a disk
 * slower than the network would otherwise buffer up to the whole file in memory.
 */
const MAX_PENDING_BYTES = 64 * 1024 * 1024;

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

/**
 * Writes the body into the already open file, reading it at network speed and never pausing it.
 * Undici 7 (nodejs/undici#5360) asserts `!this.paused` in its HTTP/1 parser when the peer closes
 * the connection while the body stream is under backpressure: an exception thrown from the
 * socket's `end` handler, which no caller can catch, ends the process. A file host that closes
 * after part of a file (or after all of it, with `Connection: close`) while we awaited a disk
 * write was enough. The fix in undici 8 (#5474) needs Node >= 22.19; we support 20.18. So the
 * body flows without backpressure into a queue of writes, and the queue is bounded by
 * MAX_PENDING_BYTES instead (a disk that slow fails the download, not the process).
 */
export function streamToFile(
  body: Dispatcher.ResponseData["body"],
  handle: FileHandle,
  directory: string,
  maxBytes: number,
  expected: number | undefined,
  onProgress: ((bytes: number) => void) | undefined,
): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let received = 0;
    let pending = 0;
    let written = 0;
    let failure: unknown;
    let writes: Promise<void> = Promise.resolve();
    const fail = (error: unknown) => {
      if (failure !== undefined) return;
      failure = error;
      body.destroy();
      // The file is closed and removed by the caller: wait until no write is in flight.
      writes.then(
        () => reject(error),
        () => reject(error),
      );
    };
    body.on("data", (chunk: Buffer) => {
      if (failure !== undefined) return;
      received += chunk.length;
      if (received > maxBytes) {
        fail(
          failed(
            `The download exceeded the ${maxBytes}-byte limit (CRM_MAX_DOWNLOAD_MB); nothing was kept.`,
          ),
        );
        return;
      }
      if (expected !== undefined && received > expected) {
        fail(
          failed(
            `The download is larger than the ${expected} bytes the export job announced; nothing was kept.`,
          ),
        );
        return;
      }
      pending += chunk.length;
      if (pending > MAX_PENDING_BYTES) {
        fail(
          failed(
            `Writing the export to ${redact(directory)} fell more than ${MAX_PENDING_BYTES} bytes behind the download; nothing was kept. Check CRM_DATA_DIR (a slow or network disk).`,
          ),
        );
        return;
      }
      writes = writes.then(async () => {
        await onDisk(directory, () => handle.write(chunk));
        pending -= chunk.length;
        written += chunk.length;
        onProgress?.(written);
      });
      writes.catch(fail);
    });
    body.on("error", (error: unknown) => fail(new BodyBroke(received, error)));
    body.on("end", () => {
      writes
        .then(async () => {
          if (failure !== undefined) return;
          if (expected !== undefined && received !== expected) {
            throw failed(
              `The download ended after ${received} of the ${expected} bytes the export job announced; nothing was kept.`,
            );
          }
          await onDisk(directory, () => handle.sync());
          resolve(received);
        })
        .catch(fail);
    });
  });
}
