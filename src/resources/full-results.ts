import {
  type McpServer,
  type ReadResourceResult,
  ResourceTemplate,
} from "@modelcontextprotocol/server";
import { formatBytes } from "../format.js";
import {
  listFullResults,
  RESULT_RESOURCE_SCHEME,
  readFullResult,
  resultUri,
} from "../mcp/full-results.js";
import type { ToolRuntime } from "../mcp/tool.js";

/** Whole tool results that were cut to their budget, as `crm-result://<id>` resources. */
export function registerResultResources(server: McpServer, runtime: ToolRuntime): void {
  server.registerResource(
    "full-result",
    new ResourceTemplate(`${RESULT_RESOURCE_SCHEME}://{id}`, {
      list: async () => ({
        resources: (await listFullResults(runtime.config.dataDir)).map((r) => ({
          uri: resultUri(r.id),
          name: r.id,
          mimeType: "application/json",
          description: `Whole result of a tool call that was cut to its budget (${formatBytes(r.bytes)}).`,
        })),
      }),
    }),
    {
      title: "Whole tool results",
      description: "Tool results whose structuredContent was cut to fit the token budget, whole.",
    },
    async (uri): Promise<ReadResourceResult> => {
      const id = decodeURIComponent(uri.host || uri.pathname.replace(/^\/+/, ""));
      const text = await readFullResult(runtime.config.dataDir, id);
      if (text === undefined) {
        throw new Error(
          `No kept result ${id.slice(0, 80)}: only the newest 50 cut results are kept. Call the tool again.`,
        );
      }
      return { contents: [{ uri: uri.href, mimeType: "application/json", text }] };
    },
  );
}
