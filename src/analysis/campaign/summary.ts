import { availableParallelism } from "node:os";
import { conversionTypeOf } from "../event-roles.js";
import type { CampaignSummary } from "../schemas.js";
import { campaignResult } from "./result.js";
import { tallyCampaignRows } from "./tally-in-one-pass.js";
import { tallyInParallel } from "./tally-in-parallel.js";

/**
 * Campaign CSV summary (spec 2.4 and 6): the rows tallied in one streaming pass, by one thread
 * or, for a large file, by several over byte ranges (tally-in-parallel.ts), then the figures.
 */

export interface CampaignSummaryOptions {
  conversionEventType?: string;
  timeZone?: string;
  signal?: AbortSignal;
  /** Threads to read with; default: the machine's cores (at most 4) for files of 64 MiB and more. */
  threads?: number;
  /** Where to cut the file between threads (tests). */
  cutAt?: number[];
  /** Bytes per read (tests). */
  chunkBytes?: number;
  /** The worker script (tests). */
  workerUrl?: URL;
}

/** Below this a worker thread's start-up costs more than it saves. */
const PARALLEL_MIN_BYTES = 64 << 20;
const MAX_THREADS = 4;

function threadsFor(bytes: number, asked: number | undefined): number {
  if (asked !== undefined) return Math.max(1, Math.floor(asked));
  if (bytes < PARALLEL_MIN_BYTES) return 1;
  return Math.max(1, Math.min(MAX_THREADS, availableParallelism()));
}

/** Summarizes a campaign export CSV at `path` (already resolved and size-checked). */
export async function summarizeCampaignCsv(
  path: string,
  bytes: number,
  options: CampaignSummaryOptions = {},
): Promise<CampaignSummary> {
  const threads = threadsFor(bytes, options.threads);
  const tally =
    (threads > 1 ? await tallyInParallel(path, bytes, { ...options, threads }) : undefined) ??
    (await tallyCampaignRows(path, bytes, options));
  return campaignResult(tally, {
    path,
    bytes,
    conversionType: conversionTypeOf(options.conversionEventType),
    timeZone: options.timeZone ?? "Asia/Seoul",
  });
}
