import type { ToolDefinition } from "../mcp/tool.js";
import campaignMetrics from "./campaign-metrics/index.js";
import checkExport from "./check-export.js";
import queryExport from "./query-export/index.js";
import recommendProducts from "./recommend-products/index.js";
import startExport from "./start-export.js";
import summarizeExport from "./summarize-export.js";

/**
 * Every tool the server registers, in the order tools/list shows them. A new tool is one file
 * default-exporting `defineTool(...)` plus one line here.
 */
export const TOOLS: ToolDefinition[] = [
  campaignMetrics,
  startExport,
  checkExport,
  summarizeExport,
  queryExport,
  recommendProducts,
];
