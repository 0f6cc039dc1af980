import type { ResourceLink, ToolAnnotations } from "@modelcontextprotocol/server";
import type { z } from "zod";
import type { CrmApi } from "../api/types.js";
import type { AuditTrail } from "../audit/index.js";
import type { ProductCatalog } from "../catalog.js";
import type { Config } from "../config.js";
import type { DownloadManager } from "../exports/download-manager.js";
import type { ClientRoots } from "../files/client-roots.js";
import type { ReadableFolders } from "../files/readable-folders.js";
import type { LedgerStore } from "../ledger/store.js";

/** What every tool handler may use; built once per server process (see runtime.ts). */
export interface ToolRuntime {
  readonly config: Config;
  /** True when answers come from the embedded sandbox (synthetic data). */
  readonly sandbox: boolean;
  /** The export-job ledger and budget: files in CRM_DATA_DIR, or PostgreSQL (team mode). */
  readonly ledger: LedgerStore;
  /** The data folder in use: CRM_DATA_DIR, or its `sandbox/` part in sandbox mode. */
  readonly dataFolder: string;
  /** The folders summarize_export and query_export read: data folder, CRM_READ_DIRS, roots. */
  readableFolders(): Promise<ReadableFolders>;
  /** The client's MCP roots, followed only over stdio with CRM_READ_ROOTS=1 (server.ts). */
  readonly clientRoots: ClientRoots;
  /**
   * Applies the retention limits to the downloaded files (see files/retention.ts) in the
   * background; never rejects. Runs once at a time; a request during a run is served by a rerun.
   */
  sweepFiles(): Promise<void>;
  /** The API client; in sandbox mode the first call starts the sandbox. */
  api(): Promise<CrmApi>;
  /** Product names and prices for recommended IDs, when a catalog is available. */
  catalog(): Promise<ProductCatalog | undefined>;
  /** The clock the data lives in (the sandbox's pinned "now" in sandbox mode). */
  now(): number;
  /** When each export job was last polled, so repeated calls keep the polling interval. */
  readonly lastPolledAt: Map<string, number>;
  /** Export files downloading in the background, shared by the calls about the same job. */
  readonly downloads: DownloadManager;
  /** Every tool call, who made it and how it ended (src/audit): beside the ledger. */
  readonly audit: AuditTrail;
  close(): Promise<void>;
}

/** Per-call facilities: cancellation and progress notifications. */
export interface ToolCall {
  /** The client renders MCP App views (it advertised the ext-apps extension). */
  readonly rendersApps?: boolean;
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

/** Fields the server adds to every result; handlers leave them out. */
type Added = "data_source";

export interface ToolOutput<S> {
  structured: Omit<S, Added>;
  /** Compact markdown for the model. */
  text: string;
  links?: ResourceLink[];
}

type AnyObject = z.ZodObject;

export interface ToolDefinition<I extends AnyObject = AnyObject, O extends AnyObject = AnyObject> {
  name: string;
  title: string;
  description: string;
  inputSchema: I;
  outputSchema: O;
  annotations: ToolAnnotations;
  /** `ui://` resource of an MCP App view that draws this tool's result (ext-apps). */
  appView?: string;
  handler(
    args: z.output<I>,
    runtime: ToolRuntime,
    call: ToolCall,
  ): Promise<ToolOutput<z.output<O>>>;
}

/** One tool per file, default-exported through this helper so the types line up. */
export function defineTool<I extends AnyObject, O extends AnyObject>(
  definition: ToolDefinition<I, O>,
): ToolDefinition<I, O> {
  return definition;
}
