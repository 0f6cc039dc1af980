import type { ResourceLink, ToolAnnotations } from "@modelcontextprotocol/server";
import type { z } from "zod";
import type { AuditTrail } from "../audit/index.js";
import type { ProductCatalog } from "../catalog.js";
import type { ExportCall, ExportRuntime } from "../exports/export-call.js";
import type { ClientRoots } from "../files/client-roots.js";
import type { ReadableFolders } from "../files/readable-folders.js";
import type { HistoryKeeper } from "../history/keeper.js";

/** What every tool handler may use; built once per server process (see runtime.ts). */
export interface ToolRuntime extends ExportRuntime {
  /** True when answers come from the embedded sandbox (synthetic data). */
  readonly sandbox: boolean;
  /** The data folder in use: CRM_DATA_DIR, or its `sandbox/` part in sandbox mode. */
  readonly dataFolder: string;
  /** The folders summarize_export and query_export read: data folder, CRM_READ_DIRS, roots. */
  readableFolders(): Promise<ReadableFolders>;
  /** The client's MCP roots, followed only over stdio with CRM_READ_ROOTS=1 (server.ts). */
  readonly clientRoots: ClientRoots;
  /** Product names and prices for recommended IDs, when a catalog is available. */
  catalog(): Promise<ProductCatalog | undefined>;
  /**
   * The recommendation slot keys, where the server knows them: in sandbox mode the embedded
   * sandbox's; undefined against the real service, which has no request that lists them.
   */
  knownSlotKeys(): Promise<KnownSlotKeys | undefined>;
  /** Every tool call, who made it and how it ended (src/audit): beside the ledger. */
  readonly audit: AuditTrail;
  /** The history of exports (src/history): every downloaded export added once. */
  readonly history: HistoryKeeper;
  close(): Promise<void>;
}

/** Slot keys by whether recommend answers them (active) or not (inactive, temporarily saved). */
export interface KnownSlotKeys {
  active: string[];
  inactive: string[];
}

/** Per-call facilities: an export call's, and whether the client renders views. */
export interface ToolCall extends ExportCall {
  /** The client renders MCP App views (it advertised the ext-apps extension). */
  readonly rendersApps?: boolean;
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
