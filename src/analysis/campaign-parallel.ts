import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { builtFile } from "../package-files.js";
import { closeTally, type TallyOptions } from "./campaign-one-pass.js";
import {
  type Pieces,
  type PiecesRead,
  pieceCuts,
  pieceStarts,
  readPieces,
  takeNoMore,
  untaken,
} from "./campaign-pieces.js";
import { readRange } from "./campaign-read.js";
import { roleCoder, rowHandler } from "./campaign-row-pass.js";
import {
  type CampaignTally,
  mergePart,
  NeedsOnePass,
  newTally,
  type TallyPart,
} from "./campaign-tally.js";
import { AnalysisError } from "./errors.js";

/**
 * One campaign CSV read by several threads: the file is cut into pieces (campaign-pieces.ts),
 * this thread reads the first and then, like each worker thread, pieces nobody has taken yet,
 * each thread into its own tally; the tallies are merged (exactly: see campaign-tally.ts).
 *
 * Where a piece starts: the first record start after a cut point cannot be known without reading
 * from the top of the file (a quoted field may hold line breaks), so each piece after the first
 * starts, speculatively, after the first line break past its cut point that rows of the campaign's
 * width follow (a line break inside an error message seldom passes that). The reader of the
 * piece before it, which started on a true record start (the first piece does; any other did if
 * the pieces before it were all checked), reads up to that offset and checks that a record ends
 * exactly there (its scanner's state is exact). If the first piece fails the check (the line
 * break was inside quotes), this thread reads on to the end of the file and the workers' work is
 * dropped; if a later one does, the file is read again in one pass: the result is still exact,
 * only slower. So is any other problem in a later piece (a malformed row, a cap reached, a file
 * that does not end with a line break): the one pass's messages give the exact line numbers.
 */

/** The worker's message: its tally, or the error that stopped it. */
export type WorkerReply =
  | ({ ok: true; part: TallyPart } & PiecesRead)
  | { ok: false; message: string; code: string | undefined };

export interface WorkerJob extends Pieces {
  path: string;
  /** the file's size */
  bytes: number;
  /** the threads reading the file, this one included */
  threads: number;
  conversionType: string | undefined;
  chunkBytes: number | undefined;
}

export interface ParallelOptions extends TallyOptions {
  /** threads to read with, this one included (at least 2) */
  threads: number;
  /** where to cut (tests); by default see pieceCuts */
  cutAt?: number[] | undefined;
  /** the worker script (tests give one that fails) */
  workerUrl?: URL | undefined;
}

/** The worker script tsc writes into dist/ (also under the tests, which run from src/). */
export function campaignWorkerUrl(): URL {
  const path = builtFile("analysis", "campaign-worker.js");
  if (!existsSync(path)) {
    throw new Error(`The summary's worker script ${path} is missing; run npm run build.`);
  }
  return pathToFileURL(path);
}

/** A worker thread reading pieces; its reply, or a clear error when it dies. */
function runWorker(
  url: URL,
  job: WorkerJob,
  signal: AbortSignal,
): { reply: Promise<WorkerReply>; stop: () => void } {
  const worker = new Worker(url, { workerData: job });
  const reply = new Promise<WorkerReply>((resolve, reject) => {
    let settled = false;
    const onAbort = (): void => {
      void worker.terminate();
    };
    signal.addEventListener("abort", onAbort, { once: true });
    const settle = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      signal.removeEventListener("abort", onAbort);
      fn();
    };
    worker.once("message", (message: WorkerReply) => {
      settle(() => resolve(message));
      void worker.terminate();
    });
    worker.once("error", (error) => {
      settle(() =>
        reject(
          new Error(
            `A summary worker thread failed: ${error instanceof Error ? error.message : String(error)}`,
          ),
        ),
      );
    });
    worker.once("exit", (code) => {
      settle(() =>
        signal.aborted
          ? reject(new AnalysisError("The summary was cancelled.", "aborted"))
          : reject(
              new Error(
                `A summary worker thread stopped (exit code ${code}) before sending its result.`,
              ),
            ),
      );
    });
  });
  // A rejection nobody awaits yet (the main range still running) must not end the process.
  reply.catch(() => undefined);
  return { reply, stop: () => void worker.terminate() };
}

/**
 * The file's tally read by `options.threads` threads, or undefined when it must be read in one
 * pass (see above). Throws on cancel, on a problem in the first range (exact there) and when a
 * worker thread dies.
 */
export async function tallyInParallel(
  path: string,
  bytes: number,
  options: ParallelOptions,
): Promise<CampaignTally | undefined> {
  const conversionType = options.conversionEventType?.trim() || undefined;
  const starts = await pieceStarts(path, bytes, options.cutAt ?? pieceCuts(bytes, options.threads));
  if (starts.length < 2) return undefined;
  // Piece 0 is this thread's; then it takes pieces from the front, the workers from the back.
  const pieces: Pieces = { starts, untaken: untaken(1, starts.length) };
  const url = options.workerUrl ?? campaignWorkerUrl();
  // Our own controller: it also stops the workers when this thread gives up on them.
  const stopAll = new AbortController();
  const onAbort = (): void => stopAll.abort();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  const threads = Math.max(2, options.threads);
  const job: WorkerJob = {
    path,
    bytes,
    threads,
    ...pieces,
    conversionType,
    chunkBytes: options.chunkBytes,
  };
  const workers = Array.from({ length: threads - 1 }, () => runWorker(url, job, stopAll.signal));
  try {
    const t = newTally(bytes / threads);
    const readOptions = { signal: options.signal, chunkBytes: options.chunkBytes };
    const first = await readRange(
      path,
      0,
      starts[1] as number,
      rowHandler(t, conversionType, true),
      readOptions,
    );
    if (first.overran) {
      // This thread read on to the end of the file: it has read every row.
      takeNoMore(pieces.untaken);
      if (t.pendingBadRecord !== undefined || !first.endsWithNewline) return undefined;
      closeTally(t, true);
      return t;
    }
    let read: PiecesRead;
    try {
      read = await readPieces(path, pieces, t, conversionType, false, readOptions);
    } catch (error) {
      if (error instanceof AnalysisError && error.code !== "aborted") return undefined;
      throw error;
    }
    let { last, overran } = read;
    const roleCode = roleCoder(conversionType);
    for (const worker of workers) {
      if (overran) return undefined;
      const reply = await worker.reply;
      if (!reply.ok) {
        if (reply.code === "aborted") throw new AnalysisError(reply.message, "aborted");
        return undefined;
      }
      overran ||= reply.overran;
      last ??= reply.last;
      mergePart(t, reply.part, roleCode);
    }
    if (overran || t.pendingBadRecord !== undefined || !last?.endsWithNewline) return undefined;
    closeTally(t, true);
    return t;
  } catch (error) {
    if (error instanceof NeedsOnePass) return undefined;
    throw error;
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
    for (const worker of workers) worker.stop();
  }
}
