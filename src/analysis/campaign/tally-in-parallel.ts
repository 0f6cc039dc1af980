import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { builtFile } from "../../package-files.js";
import { AnalysisError } from "../errors.js";
import { conversionTypeOf } from "../event-roles.js";
import { rangeStarts } from "./chunk-starts.js";
import { roleCoder } from "./row-to-tally.js";
import { type CampaignTally, mergePart, NeedsOnePass, newTally, type TallyPart } from "./tally.js";
import { closeTally, type TallyOptions } from "./tally-in-one-pass.js";
import { type ChunkEnd, newClaim, readChunks, type WorkerJob } from "./thread-chunks.js";
import { warmUpRowPass } from "./warm-up.js";

/**
 * One campaign CSV read by several threads: the file is cut into byte ranges ("chunks"), which
 * the threads take one at a time until none is left (this thread from the front, with the
 * header, the workers from the back: see takeChunk), and the threads' tallies are merged
 * (exactly: see tally.ts). Taken as they come, the chunks keep every thread busy to the
 * end whatever slows one of them (a worker's start-up, V8 compiling on the same core, a busy
 * neighbour): the threads finish within about one last, small chunk of each other, where with
 * fixed halves the others would wait for the one thrown behind.
 *
 * Where a chunk starts: the first record start after a cut point cannot be known without reading
 * from the top of the file (a quoted field may hold line breaks), so each chunk after the first
 * starts, speculatively, on a line start past its cut point (chunk-starts.ts). The reader of the
 * chunk before it, which started on a true record start, checks that a record ends exactly there
 * (its scanner's state is exact). If one does not (the line break was inside quotes), or any
 * other problem shows in a chunk (a malformed row, a cap reached, a file that does not end with a
 * line break), the caller reads the file again in one pass: the result is exact, and its
 * messages give the exact line numbers.
 */

/** The worker's message: its tally and the ends of the chunks it read, or what stopped it. */
export type WorkerReply =
  | { ok: true; part: TallyPart; ends: ChunkEnd[] }
  | { ok: false; message: string; code: string | undefined };

export interface ParallelOptions extends TallyOptions {
  threads: number;
  /** where to cut (tests); by default, chunkCuts */
  cutAt?: number[] | undefined;
  /** the worker script (tests give one that fails) */
  workerUrl?: URL | undefined;
  /** filled with the chunks each thread read, this thread's first (tests, benchmarks) */
  chunksRead?: number[][] | undefined;
}

/** The worker script tsc writes into dist/ (also under the tests, which run from src/). */
export function campaignWorkerUrl(): URL {
  const path = builtFile("analysis", "campaign", "tally-worker.js");
  if (!existsSync(path)) {
    throw new Error(`The summary's worker script ${path} is missing; run npm run build.`);
  }
  return pathToFileURL(path);
}

/**
 * What this thread reads while a worker thread starts (from its creation to its first row: Node's
 * worker start-up, the module's loading and the warm-up, on a core this thread's compiler
 * shares): where the threads are expected to meet.
 */
const WORKER_START_BYTES = 24 << 20;

/**
 * The smallest chunk: about 15-20 ms of one thread's reading, which bounds how far apart the
 * threads finish; a chunk costs one unhidden read and a check of its start (under a millisecond).
 */
const MIN_CHUNK_BYTES = 4 << 20;

/**
 * Where to cut `bytes` into chunks for `threads` threads. This thread reads from the start and
 * the workers from the end (see takeChunk) towards where they are expected to meet: the workers'
 * equal shares after this thread's longer one (a worker's start-up longer, at most half an even
 * share). The chunks are a quarter of the distance to that point, down to MIN_CHUNK_BYTES (a
 * small file asked to use threads: a sixteenth of a thread's share): large ones far from it,
 * small ones where the threads meet, however far one of them is thrown behind.
 */
export function chunkCuts(bytes: number, threads: number): number[] {
  const meet = Math.min(
    (1.5 * bytes) / threads,
    (bytes + (threads - 1) * WORKER_START_BYTES) / threads,
  );
  const least = Math.min(MIN_CHUNK_BYTES, bytes / (16 * threads));
  const towards = (from: number, to: number): number[] => {
    const cuts: number[] = [];
    let at = from;
    for (;;) {
      const left = Math.abs(to - at);
      const size = Math.max(least, left / 4);
      if (left - size < least / 2) return cuts;
      at += Math.sign(to - at) * size;
      cuts.push(Math.floor(at));
    }
  };
  return [...towards(0, meet), Math.floor(meet), ...towards(bytes, meet).reverse()];
}

/** A worker thread reading one range; its reply, or a clear error when it dies. */
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
 * pass (see above). Throws on cancel, on a problem in the first chunk (exact there) and when a
 * worker thread dies.
 */
export async function tallyInParallel(
  path: string,
  bytes: number,
  options: ParallelOptions,
): Promise<CampaignTally | undefined> {
  const conversionType = conversionTypeOf(options.conversionEventType);
  const cuts = options.cutAt ?? chunkCuts(bytes, options.threads);
  const starts = await rangeStarts(path, bytes, cuts);
  if (starts.length === 0) return undefined;
  const bounds = [0, ...starts, bytes];
  const chunks = bounds.length - 1;
  // The first chunk, with the header, is this thread's.
  const claim = newClaim(chunks);
  const url = options.workerUrl ?? campaignWorkerUrl();
  // Our own controller: it also stops the workers when this thread gives up on them.
  const stopAll = new AbortController();
  const onAbort = (): void => stopAll.abort();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  const job: WorkerJob = {
    path,
    bytes,
    bounds,
    claim,
    threads: options.threads,
    conversionType,
    chunkBytes: options.chunkBytes,
  };
  const workers = Array.from({ length: Math.min(options.threads, chunks) - 1 }, () =>
    runWorker(url, job, stopAll.signal),
  );
  try {
    warmUpRowPass(conversionType);
    const t = newTally(Math.ceil(bytes / options.threads));
    const ends = await readChunks(t, job, { signal: options.signal, first: true });
    if (ends === undefined) return undefined;
    options.chunksRead?.push(ends.map((e) => e.chunk));
    const roleCode = roleCoder(conversionType);
    for (const worker of workers) {
      const reply = await worker.reply;
      if (!reply.ok) {
        if (reply.code === "aborted") throw new AnalysisError(reply.message, "aborted");
        return undefined;
      }
      mergePart(t, reply.part, roleCode);
      options.chunksRead?.push(reply.ends.map((e) => e.chunk));
      ends.push(...reply.ends);
    }
    if (t.pendingBadRecord !== undefined || !readExactly(ends, chunks)) return undefined;
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

/**
 * Every chunk read once, each ending on a record boundary (so the next started on a record
 * start) and the last with a line break (the service ends every row with one).
 */
function readExactly(ends: ChunkEnd[], chunks: number): boolean {
  if (ends.length !== chunks) return false;
  const sorted = [...ends].sort((a, b) => a.chunk - b.chunk);
  return sorted.every(
    (e, k) => e.chunk === k && e.atRecordBoundary && (k < chunks - 1 || e.endsWithNewline),
  );
}
