import { registerAppTool } from "@modelcontextprotocol/ext-apps/server";
import type { CallToolResult, McpServer, ServerContext } from "@modelcontextprotocol/server";
import { truncate } from "../format.js";
import { log } from "../log.js";
import { redact } from "../redact.js";
import { advertisedOutputSchema } from "./advertised-output.js";
import { withAudit } from "./audit-call.js";
import { withCallLog } from "./call-log.js";
import { callerOf } from "./caller.js";
import { clientRendersApps } from "./client-apps.js";
import { errorText } from "./error-text.js";
import { logLevelsOf } from "./log-levels.js";
import { BUDGET_FIELDS, withinBudget } from "./result-budget-wrap.js";
import type { ToolCall, ToolDefinition, ToolRuntime } from "./tool.js";
import { advertisedSchema, parseToolArgs } from "./validate-input.js";

/**
 * How a tool of src/tools meets MCP: its schemas as listed, its arguments checked, its result
 * redacted and kept within the token budget, errors as `isError` text, progress notifications.
 */

const SANDBOX_NOTE =
  "[Sandbox data: synthetic data from the embedded sandbox, not a real service.]";

/** Registers the tools (src/tools/index.ts gives the list, so this folder never imports it). */
export function registerTools(
  server: McpServer,
  tools: readonly ToolDefinition[],
  runtime: ToolRuntime,
): void {
  for (const tool of tools) registerTool(server, tool, runtime);
}

export function registerTool(server: McpServer, tool: ToolDefinition, runtime: ToolRuntime): void {
  const config = {
    title: tool.title,
    description: tool.description,
    // The tool's JSON Schema is listed; the arguments are checked in the callback below.
    inputSchema: advertisedSchema(tool.inputSchema),
    outputSchema: advertisedOutputSchema(tool.outputSchema.extend(BUDGET_FIELDS)),
    // The title is the tool's, once: clients read it from either place.
    annotations: { title: tool.title, ...tool.annotations },
  };
  const callback = (args: Record<string, unknown>, ctx: ServerContext): Promise<CallToolResult> =>
    withCallLog(
      ctx,
      () =>
        withAudit(runtime, tool.name, args, ctx, (failed) =>
          callTool(
            tool,
            runtime,
            args,
            ctx,
            clientRendersApps(server.server.getClientCapabilities()),
            failed,
          ),
        ),
      logLevelsOf(runtime),
    );
  if (tool.appView === undefined) server.registerTool(tool.name, config, callback);
  // ext-apps' helper also writes the older `ui/resourceUri` key that earlier hosts read.
  else {
    const _meta = { ui: { resourceUri: tool.appView } };
    registerAppTool(server, tool.name, { ...config, _meta }, callback);
  }
}

async function callTool(
  tool: ToolDefinition,
  runtime: ToolRuntime,
  args: Record<string, unknown>,
  ctx: ServerContext,
  rendersApps: boolean,
  failed: (error: unknown) => void,
): Promise<CallToolResult> {
  const started = Date.now();
  try {
    const parsed = parseToolArgs(tool.inputSchema, args);
    const output = await tool.handler(parsed, runtime, toolCall(ctx, rendersApps));
    const dataSource = runtime.sandbox ? "sandbox" : "service";
    const text = runtime.sandbox ? `${SANDBOX_NOTE}\n${output.text}` : output.text;
    log.debug("tool call", {
      tool: tool.name,
      ...(ctx.http?.authInfo === undefined ? {} : { token: ctx.http.authInfo.clientId }),
      ms: Date.now() - started,
    });
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
    failed(error);
    // The message helps whoever reads the log; log.ts redacts keys and URL signatures.
    log.info("tool call failed", {
      tool: tool.name,
      ...(ctx.http?.authInfo === undefined ? {} : { token: ctx.http.authInfo.clientId }),
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

function toolCall(ctx: ServerContext, rendersApps: boolean): ToolCall {
  const token = ctx.mcpReq._meta?.progressToken;
  // MCP requires progress to increase with every notification of a request; callers report
  // what they know (poll counts, bytes), so a value that does not go up is moved past the last.
  let last = Number.NEGATIVE_INFINITY;
  return {
    signal: ctx.mcpReq.signal,
    principal: callerOf(ctx),
    rendersApps,
    async progress(progress, message, total) {
      if (token === undefined || ctx.mcpReq.signal.aborted) return;
      const value =
        progress !== undefined && Number.isFinite(progress) && progress > last
          ? progress
          : Number.isFinite(last)
            ? last + 1
            : progress === undefined
              ? 1
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
