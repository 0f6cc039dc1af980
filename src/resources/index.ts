import type { McpServer } from "@modelcontextprotocol/server";
import type { ToolRuntime } from "../mcp/tool.js";
import { registerExportFiles } from "./export-files.js";
import { registerResultResources } from "./full-results.js";
import { registerReportFiles } from "./report-files.js";
import { registerReportView } from "./report-view.js";

/**
 * Every MCP resource the server offers; a new one is a file here plus one line below.
 * - `crm-export://<job_id>`: downloaded export files (export-files.ts)
 * - `crm-result://<id>`: whole tool results that were cut to their token budget (full-results.ts)
 * - `ui://crm-insights/report.html`: the report page as an MCP App view (report-view.ts)
 * - `crm-report://<name>`: HTML reports written by summarize_export (report-files.ts)
 */
export function registerResources(server: McpServer, runtime: ToolRuntime): void {
  registerExportFiles(server, runtime);
  registerResultResources(server, runtime);
  registerReportView(server);
  registerReportFiles(server, runtime.config.dataDir);
}
