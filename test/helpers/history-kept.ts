import type { ToolResult } from "./tool-harness.js";
import { type WaitOptions, waitUntil } from "./wait-until.js";

/** check_export as the test reaches the server (in process, over HTTP, in a host). */
export type CheckExport = (args: { job_id: string; wait_seconds: number }) => Promise<ToolResult>;

/**
 * Resolves once check_export says the job's downloaded file is kept in the history (the history
 * adds it in the background); fails at once, with check_export's text, when it says the file
 * could not be added.
 */
export async function untilKept(
  checkExport: CheckExport,
  jobId: string,
  options?: WaitOptions,
): Promise<void> {
  await waitUntil(
    async () => {
      const r = await checkExport({ job_id: jobId, wait_seconds: 0 });
      const status = (r.structured.history as { status?: string } | undefined)?.status;
      if (status === "failed") throw new Error(`job ${jobId} was not added: ${r.text}`);
      return status === "kept";
    },
    `job ${jobId} to be kept in the history`,
    options,
  );
}
