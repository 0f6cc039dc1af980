import { ToolCancelledError } from "./cancelled.js";

/** Waits `ms`, or rejects with ToolCancelledError as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new ToolCancelledError("Cancelled while waiting for the export job."));
      return;
    }
    const timer = setTimeout(
      () => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    const onAbort = () => {
      clearTimeout(timer);
      reject(new ToolCancelledError("Cancelled while waiting for the export job."));
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
