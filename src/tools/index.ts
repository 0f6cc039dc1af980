import campaignMetrics from "./campaign-metrics.js";
import checkExport from "./check-export.js";
import queryExport from "./query-export.js";
import recommendProducts from "./recommend-products.js";
import startExport from "./start-export.js";
import summarizeExport from "./summarize-export.js";
import type { ToolDefinition } from "./tool.js";

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
