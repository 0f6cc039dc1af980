import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { McpServer, ReadResourceResult } from "@modelcontextprotocol/server";
import { ResourceTemplate } from "@modelcontextprotocol/server";
import { REPORT_NAME, REPORT_RESOURCE_SCHEME, reportsDir } from "../report/files.js";

/** `crm-report://<name>`: a report written by summarize_export, read back by name. */
export function registerReportFiles(server: McpServer, dataDir: string): void {
  server.registerResource(
    "report-file",
    new ResourceTemplate(`${REPORT_RESOURCE_SCHEME}://{name}`, { list: undefined }),
    {
      title: "HTML reports",
      description: 'Self-contained HTML reports written by summarize_export with "report": true.',
      mimeType: "text/html",
    },
    async (uri): Promise<ReadResourceResult> => {
      const name = decodeURIComponent(uri.host || uri.pathname.replace(/^\/+/, ""));
      if (!REPORT_NAME.test(name)) {
        throw new Error(
          `${JSON.stringify(name)} is not a report name; use the crm-report:// link summarize_export returned.`,
        );
      }
      try {
        const text = await readFile(join(reportsDir(dataDir), name), "utf8");
        return { contents: [{ uri: uri.href, mimeType: "text/html", text }] };
      } catch {
        throw new Error(
          `No report named ${name}; write one with summarize_export {"job_id": ..., "report": true}.`,
        );
      }
    },
  );
}
