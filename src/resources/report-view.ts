import { RESOURCE_MIME_TYPE, registerAppResource } from "@modelcontextprotocol/ext-apps/server";
import type { McpServer } from "@modelcontextprotocol/server";
import { reportViewHtml } from "../report/html.js";

/**
 * The report page as an MCP App view (ext-apps): summarize_export, campaign_metrics and
 * query_export name it in `_meta.ui.resourceUri`, and a host that renders MCP Apps reads it here and hands it each tool
 * result. Hosts without MCP Apps never read it and get the same text and structuredContent.
 */

export const REPORT_VIEW_URI = "ui://crm-insights/report.html";

export function registerReportView(server: McpServer): void {
  registerAppResource(
    server,
    "report-view",
    REPORT_VIEW_URI,
    {
      title: "Report view",
      description:
        "Charts and tables of a summarize_export, campaign_metrics or query_export result (an MCP App view; self-contained, fetches nothing).",
      mimeType: RESOURCE_MIME_TYPE,
    },
    async () => ({
      contents: [
        {
          uri: REPORT_VIEW_URI,
          mimeType: RESOURCE_MIME_TYPE,
          text: await reportViewHtml(),
          // Everything is inline and the data comes from the host: no domain to allow.
          _meta: { ui: { csp: { connectDomains: [], resourceDomains: [] }, prefersBorder: true } },
        },
      ],
    }),
  );
}
