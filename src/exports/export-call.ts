import type { CrmApi } from "../api/types.js";
import type { Config } from "../config.js";
import type { LedgerStore } from "../ledger/store.js";
import type { DownloadManager } from "./download-manager.js";

/**
 * What the export flow uses of the server: declared here so that src/exports/ needs nothing of
 * the MCP layer; the tools' runtime and call (mcp/tool.ts) extend these.
 */

/** The server's shared state an export needs; built once per server process (see runtime.ts). */
export interface ExportRuntime {
  readonly config: Config;
  /** The export-job ledger and budget: files in CRM_DATA_DIR, or PostgreSQL (team mode). */
  readonly ledger: LedgerStore;
  /**
   * Applies the retention limits to the downloaded files (see files/retention.ts) in the
   * background; never rejects. Runs once at a time; a request during a run is served by a rerun.
   */
  sweepFiles(): Promise<void>;
  /** The API client; in sandbox mode the first call starts the sandbox. */
  api(): Promise<CrmApi>;
  /** The clock the data lives in (the sandbox's pinned "now" in sandbox mode). */
  now(): number;
  /** When each export job was last polled, so repeated calls keep the polling interval. */
  readonly lastPolledAt: Map<string, number>;
  /** Export files downloading in the background, shared by the calls about the same job. */
  readonly downloads: DownloadManager;
  /**
   * Adds a file this process just downloaded to the history of exports, in the background
   * (runtime.ts; nothing with CRM_HISTORY=off): never delays the call, never rejects.
   */
  keepInHistory(jobId: string): void;
}

/** One call that follows an export: cancellation, progress notifications, who calls. */
export interface ExportCall {
  readonly signal: AbortSignal;
  /**
   * Who calls (see mcp/caller.ts): the access token's subject or the static token's name over
   * HTTP, `local:<user>` on stdio. Recorded as the creator of the export jobs it makes.
   */
  readonly principal?: string | undefined;
  /**
   * Sends `notifications/progress` when the client asked for progress; otherwise does nothing.
   * Values always increase (MCP requires it): one that does not is moved past the last, and
   * `undefined` means one step past the last.
   */
  progress(progress: number | undefined, message: string, total?: number): Promise<void>;
}

/** One progress step of a call (the call keeps its values increasing across wait and download). */
export function reportProgress(call: ExportCall, message: string): Promise<void> {
  return call.progress(undefined, message);
}
