import { readFile, stat } from "node:fs/promises";
import {
  type McpServer,
  type ReadResourceResult,
  ResourceTemplate,
} from "@modelcontextprotocol/server";
import { EXPORT_RESOURCE_SCHEME, exportResourceUri, mimeTypeFor } from "../exports/file-link.js";
import { callHint, formatBytes } from "../format.js";
import type { ToolRuntime } from "../mcp/tool.js";

const MAX_INLINE_RESOURCE_BYTES = 512 * 1024;

/** Downloaded export files as `crm-export://<job_id>` resources, listed and read from the ledger. */
export function registerExportFiles(server: McpServer, runtime: ToolRuntime): void {
  server.registerResource(
    "export-file",
    new ResourceTemplate(`${EXPORT_RESOURCE_SCHEME}://{job_id}`, {
      list: async () => {
        const entries = await runtime.ledger.downloadedFiles();
        return {
          resources: entries.slice(0, 100).map((e) => ({
            uri: exportResourceUri(e.job_id),
            name: `${e.job.file_name ?? e.job_id}.${e.job.file_ext ?? "csv"}`,
            mimeType: mimeTypeFor(e.job.file_ext ?? ""),
            description: `${e.request.type} export ${e.job_id} (${formatBytes(e.file_bytes ?? 0)}), downloaded ${e.downloaded_at ?? ""} to ${e.file_path ?? ""}`,
          })),
        };
      },
    }),
    {
      title: "Downloaded export files",
      description:
        "Export files (campaign CSV, scenario XLSX) downloaded by start_export/check_export.",
    },
    async (uri): Promise<ReadResourceResult> => {
      const jobId = decodeURIComponent(uri.host || uri.pathname.replace(/^\/+/, ""));
      const entry = await runtime.ledger.get(jobId);
      if (entry?.file_path === undefined) {
        throw new Error(
          `No downloaded file for export job ${jobId}; run ${callHint("check_export", { job_id: jobId })} first.`,
        );
      }
      const ext = entry.job.file_ext ?? "";
      const mimeType = mimeTypeFor(ext);
      const size = (await stat(entry.file_path)).size;
      if (size > MAX_INLINE_RESOURCE_BYTES) {
        return {
          contents: [
            {
              uri: uri.href,
              mimeType: "text/plain",
              text: `The file is ${formatBytes(size)}, too large to return inline. It is at ${entry.file_path}; analyse it with ${callHint("summarize_export", { job_id: jobId })}.`,
            },
          ],
        };
      }
      const bytes = await readFile(entry.file_path);
      return {
        contents: [
          ext === "csv"
            ? { uri: uri.href, mimeType, text: bytes.toString("utf8") }
            : { uri: uri.href, mimeType, blob: bytes.toString("base64") },
        ],
      };
    },
  );
}
