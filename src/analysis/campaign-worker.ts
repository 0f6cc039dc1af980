import { parentPort, workerData } from "node:worker_threads";
import type { WorkerJob, WorkerReply } from "./campaign-parallel.js";
import { readPieces } from "./campaign-pieces.js";
import { newTally, toPart } from "./campaign-tally.js";
import { AnalysisError } from "./errors.js";

/**
 * A worker thread's job: the tally of the pieces of a campaign CSV it takes (see
 * campaign-pieces.ts), sent back with its maps' buffers transferred, not copied.
 */

const job = workerData as WorkerJob;
const port = parentPort;
if (port === null) throw new Error("campaign-worker.js runs only as a worker thread.");

let reply: WorkerReply;
let transfer: ArrayBuffer[] = [];
try {
  const t = newTally(job.bytes / job.threads);
  const read = await readPieces(
    job.path,
    { starts: job.starts, untaken: job.untaken },
    t,
    job.conversionType,
    true,
    { chunkBytes: job.chunkBytes },
  );
  const out = toPart(t);
  reply = { ok: true, part: out.part, ...read };
  transfer = out.transfer;
} catch (error) {
  reply = {
    ok: false,
    message: error instanceof Error ? error.message : String(error),
    code: error instanceof AnalysisError ? error.code : undefined,
  };
}
port.postMessage(reply, transfer);
