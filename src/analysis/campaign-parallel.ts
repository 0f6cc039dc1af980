import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { builtFile } from "../package-files.js";
import { rangeStarts } from "./campaign-cuts.js";
import { closeTally, type TallyOptions } from "./campaign-one-pass.js";
import { type RangeEnd, readRange } from "./campaign-read.js";
import { roleCoder, rowHandler } from "./campaign-row-pass.js";
import {
  type CampaignTally,
  mergePart,
  NeedsOnePass,
  newTally,
  type TallyPart,
} from "./campaign-tally.js";
import { warmUpRowPass } from "./campaign-warm-up.js";
import { AnalysisError } from "./errors.js";

/**
 * One campaign CSV read by several threads: the file is cut into byte ranges, this thread reads
 * the first and a worker thread each of the others, and the partial tallies are merged (exactly:
 * see campaign-tally.ts).
 *
 * Where a range starts: the first record start after a cut point cannot be known without reading
 * from the top of the file (a quoted field may hold line breaks), so each range after the first
 * starts, speculatively, after a line break past its cut point (campaign-cuts.ts). The reader of
 * the range before it, which started on a true record start, reads up to that offset and checks
 * that a record ends exactly there (its scanner's state is exact). If not (the line break was
 * inside quotes), that reader reads on to the end of the file and the later ranges' work is
 * dropped: the result is still exact, only slower. Any other problem in a range (a malformed row, a cap
 * reached, a file that does not end with a line break) makes the caller read the file again in
 * one pass, whose messages give the exact line numbers.
 */

/** The worker's message: its tally, or the error that stopped it. */
export type WorkerReply =
  | { ok: true; part: TallyPart; end: RangeEnd }
  | { ok: false; message: string; code: string | undefined };

export interface WorkerJob {
  path: string;
  /** the file's size */
  bytes: number;
  start: number;
  end: number;
  conversionType: string | undefined;
  chunkBytes: number | undefined;
}

export interface ParallelOptions extends TallyOptions {
  threads: number;
  /** where to cut (tests); by default the file is cut into equal parts */
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

/**
 * What this thread reads while a worker thread starts (100-140 ms from its creation to its first
 * row, measured on 375 MB exports: Node's worker start-up, the module's loading and the warm-up,
 * on a core this thread's compiler shares): its range is longer by that much, so all finish
 * together.
 */
const WORKER_START_BYTES = 24 << 20;

/**
 * Where to cut `bytes` for `threads` threads: the workers' ranges equal, this thread's longer, by
 * at most half an even share (a small file asked to use threads still gives them some).
 */
export function evenCuts(bytes: number, threads: number): number[] {
  const head = Math.min(
    (1.5 * bytes) / threads,
    (bytes + (threads - 1) * WORKER_START_BYTES) / threads,
  );
  const rest = (bytes - head) / (threads - 1);
  return Array.from({ length: threads - 1 }, (_, k) => Math.floor(head + k * rest));
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
 * pass (see above). Throws on cancel, on a problem in the first range (exact there) and when a
 * worker thread dies.
 */
export async function tallyInParallel(
  path: string,
  bytes: number,
  options: ParallelOptions,
): Promise<CampaignTally | undefined> {
  const conversionType = options.conversionEventType?.trim() || undefined;
  const cuts = options.cutAt ?? evenCuts(bytes, options.threads);
  const starts = await rangeStarts(path, bytes, cuts);
  if (starts.length === 0) return undefined;
  const url = options.workerUrl ?? campaignWorkerUrl();
  // Our own controller: it also stops the workers when this thread gives up on them.
  const stopAll = new AbortController();
  const onAbort = (): void => stopAll.abort();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  const workers = starts.map((start, k) =>
    runWorker(
      url,
      {
        path,
        bytes,
        start,
        end: starts[k + 1] ?? Number.POSITIVE_INFINITY,
        conversionType,
        chunkBytes: options.chunkBytes,
      },
      stopAll.signal,
    ),
  );
  try {
    warmUpRowPass(conversionType);
    const t = newTally(starts[0] as number);
    const first = await readRange(
      path,
      0,
      starts[0] as number,
      rowHandler(t, conversionType, true),
      {
        signal: options.signal,
        chunkBytes: options.chunkBytes,
      },
    );
    let last = first;
    const roleCode = roleCoder(conversionType);
    for (const worker of workers) {
      if (last.overran) break;
      const reply = await worker.reply;
      if (!reply.ok) {
        if (reply.code === "aborted") throw new AnalysisError(reply.message, "aborted");
        return undefined;
      }
      mergePart(t, reply.part, roleCode);
      last = reply.end;
    }
    if (t.pendingBadRecord !== undefined || !last.endsWithNewline) return undefined;
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
