import type { ExportRuntime } from "./export-call.js";

/**
 * Find-or-create runs one at a time per request key in this process: an identical call arriving
 * while a create is in flight waits for it and then finds the job running instead of creating a
 * second one. (Across processes, cross-process-claim.ts does the same through the ledger store.)
 */

/** Per runtime, the tail of each request key's queue of find-or-create steps. */
const keyQueues = new WeakMap<ExportRuntime, Map<string, Promise<void>>>();

/** Waits for the earlier find-or-create steps of the same request key; returns the release. */
export async function lockRequestKey(runtime: ExportRuntime, key: string): Promise<() => void> {
  let queues = keyQueues.get(runtime);
  if (queues === undefined) {
    queues = new Map();
    keyQueues.set(runtime, queues);
  }
  const before = queues.get(key) ?? Promise.resolve();
  let release = () => {};
  const mine = new Promise<void>((resolve) => {
    release = resolve;
  });
  const tail = before.then(() => mine);
  queues.set(key, tail);
  void tail.then(() => {
    if (queues.get(key) === tail) queues.delete(key);
  });
  await before;
  return release;
}
