import { AnalysisError } from "../errors.js";
import { type RangeEnd, RangeReader } from "./range-reader.js";
import { rowHandler } from "./row-to-tally.js";
import type { CampaignTally } from "./tally.js";
import { NeedsOnePass } from "./tally.js";

/**
 * A thread's share of a campaign CSV's chunks (see tally-in-parallel.ts): it takes the next
 * untaken chunk, from the front or the back, until none is left.
 */

/** Where a chunk ended, as its reader saw it. */
export interface ChunkEnd extends RangeEnd {
  chunk: number;
}

export interface WorkerJob {
  path: string;
  /** the file's size */
  bytes: number;
  /** chunk k is `[bounds[k], bounds[k + 1])` */
  bounds: number[];
  /** the chunks not yet taken (see takeChunk); shared by all threads of the summary */
  claim: Int32Array;
  /** how many threads read (sizes the tally's first maps) */
  threads: number;
  conversionType: string | undefined;
  chunkBytes: number | undefined;
}

/**
 * The next chunk for a thread, or undefined when all are taken. `claim[0]` packs the next chunk
 * from the front (low 16 bits) and one past the next from the back: the first thread reads
 * forward from the file's start, the workers backward from its end, so each thread's chunks lie
 * side by side until they meet: a round's users then stay mostly in one thread's maps (chunks
 * taken in file order would put half of every round's users in each, all of which the merge
 * then adds to the other half).
 */
export function takeChunk(claim: Int32Array, fromBack: boolean): number | undefined {
  for (;;) {
    const packed = Atomics.load(claim, 0);
    const front = packed & 0xffff;
    const back = packed >>> 16;
    if (front >= back) return undefined;
    const taken = fromBack ? ((back - 1) << 16) | front : (back << 16) | (front + 1);
    if (Atomics.compareExchange(claim, 0, packed, taken) === packed) {
      return fromBack ? back - 1 : front;
    }
  }
}

/** A claim on `chunks` chunks whose first is already taken (by the first thread, for the header). */
export function newClaim(chunks: number): Int32Array {
  if (chunks >= 0x8000) throw new Error(`Too many chunks: ${chunks}.`);
  const claim = new Int32Array(new SharedArrayBuffer(4));
  claim[0] = (chunks << 16) | 1;
  return claim;
}

/** Lets no thread take another chunk (the result will be thrown away). */
function takeNoMore(claim: Int32Array): void {
  Atomics.store(claim, 0, 0);
}

/**
 * One thread's share of the chunks into `t`: with `first`, chunk 0 and then whichever are left.
 * Undefined when the file must be read in one pass (a chunk ended inside a record, or a problem
 * showed in a chunk whose line numbers are not the file's). Problems in chunk 0 are thrown: its
 * line numbers are exact.
 */
export async function readChunks(
  t: CampaignTally,
  job: WorkerJob,
  options: { signal?: AbortSignal | undefined; first: boolean },
): Promise<ChunkEnd[] | undefined> {
  const chunks = job.bounds.length - 1;
  const reader = await RangeReader.open(
    job.path,
    rowHandler(t, job.conversionType, options.first),
    {
      signal: options.signal,
      chunkBytes: job.chunkBytes,
    },
  );
  const ends: ChunkEnd[] = [];
  try {
    for (
      let k = options.first ? 0 : takeChunk(job.claim, true);
      k !== undefined;
      k = takeChunk(job.claim, !options.first)
    ) {
      let end: RangeEnd;
      try {
        end = await reader.read(job.bounds[k] as number, job.bounds[k + 1] as number);
      } catch (error) {
        // Chunk 0's line numbers are the file's, and a cancel is a cancel: those are thrown. A
        // problem in a later chunk is read again in one pass, for its true line number.
        const exact = k === 0 || (error instanceof AnalysisError && error.code === "aborted");
        const readAgain = error instanceof AnalysisError || error instanceof NeedsOnePass;
        if (exact || !readAgain) throw error;
        takeNoMore(job.claim);
        return undefined;
      }
      ends.push({ chunk: k, ...end });
      if (!end.atRecordBoundary && k < chunks - 1) {
        takeNoMore(job.claim);
        return undefined;
      }
    }
  } finally {
    await reader.close();
  }
  return ends;
}
