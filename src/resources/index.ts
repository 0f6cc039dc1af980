import type { McpServer } from "@modelcontextprotocol/server";
import type { ToolRuntime } from "../tools/tool.js";
import { registerExportFiles } from "./export-files.js";
import { registerResultResources } from "./full-results.js";

/**
 * Every MCP resource the server offers; a new one is a file here plus one line below.
 * - `crm-export://<job_id>`: downloaded export files (export-files.ts)
 * - `crm-result://<id>`: whole tool results that were cut to their token budget (full-results.ts)
 */
export function registerResources(server: McpServer, runtime: ToolRuntime): void {
  registerExportFiles(server, runtime);
  registerResultResources(server, runtime);
}
