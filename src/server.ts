import { readFile, stat } from "node:fs/promises";
import {
  type CallToolResult,
  McpServer,
  type ReadResourceResult,
  ResourceTemplate,
  type ServerContext,
} from "@modelcontextprotocol/server";
import {
  EXPORT_CREATE_LIMIT,
  EXPORT_CREATE_WINDOW_SECONDS,
  MAX_METRICS_WINDOW_DAYS,
  MIN_POLL_INTERVAL_SECONDS,
} from "./api/limits.js";
import type { CrmApi } from "./api/types.js";
import type { Config } from "./config.js";
import { callHint, formatBytes, truncate } from "./format.js";
import { log } from "./log.js";
import { registerPrompts } from "./prompts/index.js";
import { redact } from "./redact.js";
import { advertisedOutputSchema } from "./tools/advertised-output.js";
import { withCallLog } from "./tools/call-log.js";
import { errorText } from "./tools/error-text.js";
import { EXPORT_RESOURCE_SCHEME, exportResourceUri, mimeTypeFor } from "./tools/export-flow.js";
import { registerResultResources } from "./tools/full-result-resources.js";
import { TOOLS } from "./tools/index.js";
import { BUDGET_FIELDS, withinBudget } from "./tools/result-budget-wrap.js";
import { createRuntime } from "./tools/runtime.js";
import type { ToolCall, ToolDefinition, ToolRuntime } from "./tools/tool.js";
import { advertisedSchema, parseToolArgs } from "./tools/validate-input.js";
import { PACKAGE_VERSION } from "./version.js";

export interface ServerDeps {
  /** Shared state; pass one runtime to several servers of the same process (serveStdio). */
  runtime?: ToolRuntime;
  /** A ready API client instead of one built from the config (tests). */
  api?: CrmApi;
  now?: () => number;
  /** Sandbox mode: what exists in the sandbox (see sandboxGuide), added to the instructions. */
  sandboxGuide?: string;
}

export const SERVER_INSTRUCTIONS = `Tools for a Korean messaging and recommendation service (campaign metrics, export files, product recommendations).
Workflow: 1) campaign_metrics to find and rank campaigns in a period (its campaigns[]._id feeds the next step); 2) start_export to create an export (campaign raw events as CSV, or scenario daily metrics as XLSX) - it waits up to wait_seconds and downloads the file; 3) if it returns before the job finishes, call check_export with the job_id it gives (repeat until done); 4) summarize_export with the job_id to analyse the file.
Export budget: the service allows ${EXPORT_CREATE_LIMIT} export-job creations per ${EXPORT_CREATE_WINDOW_SECONDS / 60} minutes per application. Reuse jobs (check_export without job_id lists them; identical requests are answered from the local ledger) and use force only when a new job is really needed.
Polling rule: export jobs are polled at most every ${MIN_POLL_INTERVAL_SECONDS} seconds and usually take tens of seconds to several minutes; do not call check_export in a tight loop - use its wait_seconds.
Dates: export ranges are calendar dates in the application's time zone; campaign_metrics windows are read in KST (at most ${MAX_METRICS_WINDOW_DAYS} days per request, split automatically).`;

const SANDBOX_NOTE =
  "[Sandbox data: synthetic data from the embedded sandbox, not a real service.]";
const MAX_INLINE_RESOURCE_BYTES = 512 * 1024;

/** Builds the MCP server: every tool of src/tools, export files as resources, instructions. */
export function createServer(
  config: Config,
  deps: ServerDeps = {},
): { server: McpServer; runtime: ToolRuntime; close(): Promise<void> } {
  const ownsRuntime = deps.runtime === undefined;
  const runtime =
    deps.runtime ??
    createRuntime(config, {
      ...(deps.api === undefined ? {} : { api: deps.api }),
      ...(deps.now === undefined ? {} : { now: deps.now }),
    });
  const server = new McpServer(
    { name: "crm-insights-mcp", version: PACKAGE_VERSION },
    {
      instructions:
        deps.sandboxGuide === undefined
          ? SERVER_INSTRUCTIONS
          : `${SERVER_INSTRUCTIONS}\n${deps.sandboxGuide}`,
      capabilities: { tools: {}, resources: {}, prompts: {}, completions: {}, logging: {} },
    },
  );
  for (const tool of TOOLS) registerTool(server, tool, runtime);
  registerExportResources(server, runtime);
  registerResultResources(server, runtime);
  registerPrompts(server, runtime);
  return {
    server,
    runtime,
    async close() {
      await server.close();
      if (ownsRuntime) await runtime.close();
    },
  };
}

/**
 * Sandbox mode: the scenario IDs, slot keys and users with behaviour data, which the assistant
 * has no tool to discover (campaign IDs come from campaign_metrics). Derived from the seed
 * without starting the sandbox; loaded on demand so remote mode never imports the world.
 */
export async function sandboxGuide(config: Config): Promise<string> {
  const [{ createScenarios }, { SLOTS }, { platformUserIdOf }] = await Promise.all([
    import("./sandbox/world/scenarios.js"),
    import("./sandbox/world/recommend.js"),
    import("./sandbox/world/users.js"),
  ]);
  // Scenario IDs and names depend on the seed only; the clock only places their data.
  const scenarios = createScenarios(config.sandbox.seed, Date.now()).scenarios;
  const needs: Record<string, string> = {
    none: "platform_user_id optional",
    behavior: "item_ids, or a platform_user_id with behaviour",
    items: "needs item_ids",
  };
  const slots = SLOTS.filter((s) => s.state === "active").map(
    (s) => `${s.key} (${s.kind}; ${needs[s.input] ?? s.input})`,
  );
  const users = [42, 7, 1234].map(platformUserIdOf);
  return [
    "Sandbox mode (CRM_BASE_URL unset): synthetic data; nothing here is a real customer.",
    `Scenario IDs for start_export type scenario_daily_metrics: ${scenarios.map((s) => `${s._id} (${s.name})`).join(", ")}.`,
    `Recommendation slot keys: ${slots.join(", ")}.`,
    `Users with behaviour data (personalized results): pu_000000 to pu_002999, e.g. ${users.join(", ")}; other IDs are cold users. Product IDs: take them from a best_sellers recommendation.`,
  ].join("\n");
}

export function registerTool(server: McpServer, tool: ToolDefinition, runtime: ToolRuntime): void {
  server.registerTool(
    tool.name,
    {
      title: tool.title,
      description: tool.description,
      // The tool's JSON Schema is listed; the arguments are checked in the callback below.
      inputSchema: advertisedSchema(tool.inputSchema),
      outputSchema: advertisedOutputSchema(tool.outputSchema.extend(BUDGET_FIELDS)),
      // The title is the tool's, once: clients read it from either place.
      annotations: { title: tool.title, ...tool.annotations },
    },
    (args: Record<string, unknown>, ctx: ServerContext): Promise<CallToolResult> =>
      withCallLog(ctx, () => callTool(tool, runtime, args, ctx)),
  );
}

async function callTool(
  tool: ToolDefinition,
  runtime: ToolRuntime,
  args: Record<string, unknown>,
  ctx: ServerContext,
): Promise<CallToolResult> {
  const started = Date.now();
  try {
    const parsed = parseToolArgs(tool.inputSchema, args);
    const output = await tool.handler(parsed, runtime, toolCall(ctx));
    const dataSource = runtime.sandbox ? "sandbox" : "service";
    const text = runtime.sandbox ? `${SANDBOX_NOTE}\n${output.text}` : output.text;
    log.debug("tool call", { tool: tool.name, ms: Date.now() - started });
    // Redacted as a whole: a key or signed URL must not reach the model by any field.
    const structured = JSON.parse(
      redact(JSON.stringify({ ...output.structured, data_source: dataSource })),
    ) as Record<string, unknown>;
    const bounded = await withinBudget(tool.name, structured, runtime);
    return {
      content: [
        { type: "text", text: redact(text) + bounded.note },
        ...(output.links ?? []),
        ...bounded.links,
      ],
      structuredContent: bounded.structured,
    };
  } catch (error) {
    // The message helps whoever reads the log; log.ts redacts keys and URL signatures.
    log.info("tool call failed", {
      tool: tool.name,
      error: error instanceof Error ? error.name : "unknown",
      message: truncate(error instanceof Error ? error.message : String(error), 300),
      ms: Date.now() - started,
    });
    const text = errorText(error, tool.name);
    return {
      content: [{ type: "text", text: runtime.sandbox ? `${SANDBOX_NOTE}\n${text}` : text }],
      isError: true,
    };
  }
}

function toolCall(ctx: ServerContext): ToolCall {
  const token = ctx.mcpReq._meta?.progressToken;
  // MCP requires progress to increase with every notification of a request; callers report
  // what they know (poll counts, bytes), so a value that does not go up is moved past the last.
  let last = Number.NEGATIVE_INFINITY;
  return {
    signal: ctx.mcpReq.signal,
    async progress(progress, message, total) {
      if (token === undefined || ctx.mcpReq.signal.aborted) return;
      const value =
        Number.isFinite(progress) && progress > last
          ? progress
          : Number.isFinite(last)
            ? last + 1
            : 0;
      last = value;
      try {
        await ctx.mcpReq.notify({
          method: "notifications/progress",
          params: {
            progressToken: token,
            progress: value,
            message,
            // A total already passed would contradict the moved value.
            ...(total === undefined || total < value ? {} : { total }),
          },
        });
      } catch (error) {
        // Progress is best effort: a closed transport must not fail the tool call.
        log.debug("progress notification failed", { error: String(error) });
      }
    },
  };
}

/** Downloaded export files as `crm-export://<job_id>` resources. */
function registerExportResources(server: McpServer, runtime: ToolRuntime): void {
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
