import { parentPort, workerData } from "node:worker_threads";
import { AnalysisError } from "../errors.js";
import { newTally, toPart } from "./tally.js";
import type { WorkerReply } from "./tally-in-parallel.js";
import { readChunks, type WorkerJob } from "./thread-chunks.js";
import { warmUpRowPass } from "./warm-up.js";

/**
 * A worker thread's job: the tally of the chunks of a campaign CSV it takes (see
 * tally-in-parallel.ts), sent back with its maps' buffers transferred, not copied.
 */

const job = workerData as WorkerJob;
const port = parentPort;
if (port === null) throw new Error("tally-worker.js runs only as a worker thread.");

let reply: WorkerReply;
let transfer: ArrayBuffer[] = [];
try {
  warmUpRowPass(job.conversionType);
  const t = newTally(Math.ceil(job.bytes / job.threads));
  const ends = await readChunks(t, job, { first: false });
  if (ends === undefined) {
    reply = { ok: false, message: "The file must be read in one pass.", code: "one_pass" };
  } else {
    const out = toPart(t);
    reply = { ok: true, part: out.part, ends };
    transfer = out.transfer;
  }
} catch (error) {
  reply = {
    ok: false,
    message: error instanceof Error ? error.message : String(error),
    code: error instanceof AnalysisError ? error.code : undefined,
  };
}
port.postMessage(reply, transfer);
