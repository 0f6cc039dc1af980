import { parentPort, workerData } from "node:worker_threads";
import type { WorkerJob, WorkerReply } from "./campaign-parallel.js";
import { readRange } from "./campaign-read.js";
import { rowHandler } from "./campaign-row-pass.js";
import { newTally, toPart } from "./campaign-tally.js";
import { warmUpRowPass } from "./campaign-warm-up.js";
import { AnalysisError } from "./errors.js";

/**
 * A worker thread's job: the tally of one byte range of a campaign CSV (see
 * campaign-parallel.ts), sent back with its maps' buffers transferred, not copied.
 */

const job = workerData as WorkerJob;
const port = parentPort;
if (port === null) throw new Error("campaign-worker.js runs only as a worker thread.");

let reply: WorkerReply;
let transfer: ArrayBuffer[] = [];
try {
  warmUpRowPass(job.conversionType);
  const t = newTally(Math.min(job.end, job.bytes) - job.start);
  const end = await readRange(
    job.path,
    job.start,
    job.end,
    rowHandler(t, job.conversionType, false),
    {
      chunkBytes: job.chunkBytes,
    },
  );
  const out = toPart(t);
  reply = { ok: true, part: out.part, end };
  transfer = out.transfer;
} catch (error) {
  reply = {
    ok: false,
    message: error instanceof Error ? error.message : String(error),
    code: error instanceof AnalysisError ? error.code : undefined,
  };
}
port.postMessage(reply, transfer);
