/** How a downloaded export file is named to an MCP client: its resource URI and MIME type. */

export const EXPORT_RESOURCE_SCHEME = "crm-export";

export function exportResourceUri(jobId: string): string {
  return `${EXPORT_RESOURCE_SCHEME}://${encodeURIComponent(jobId)}`;
}

/** The MIME type of an export file by its extension. */
export function mimeTypeFor(ext: string): string {
  return ext === "csv"
    ? "text/csv"
    : ext === "xlsx"
      ? "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
      : "application/octet-stream";
}
