import { McpServer } from "@modelcontextprotocol/server";
import {
  EXPORT_CREATE_LIMIT,
  EXPORT_CREATE_WINDOW_SECONDS,
  MAX_METRICS_WINDOW_DAYS,
  MIN_POLL_INTERVAL_SECONDS,
} from "./api/limits.js";
import type { CrmApi } from "./api/types.js";
import type { Config } from "./config.js";
import { followClientRoots } from "./mcp/follow-roots.js";
import { logLevelsOf, registerSetLevel } from "./mcp/log-levels.js";
import { registerTools } from "./mcp/register.js";
import { allows, toolScope } from "./mcp/scopes.js";
import type { ToolRuntime } from "./mcp/tool.js";
import { registerPrompts } from "./prompts/index.js";
import { registerResources } from "./resources/index.js";
import { createRuntime } from "./runtime.js";
import { TOOLS } from "./tools/index.js";
import { PACKAGE_VERSION } from "./version.js";

export interface ServerDeps {
  /** Shared state; pass one runtime to several servers of the same process (serveStdio). */
  runtime?: ToolRuntime;
  /** A ready API client instead of one built from the config (tests). */
  api?: CrmApi;
  now?: () => number;
  /** Sandbox mode: what exists in the sandbox (see sandboxGuide), added to the instructions. */
  sandboxGuide?: string;
  /**
   * The caller's OAuth scopes (serve --http): only the tools, resources and prompts they allow
   * are registered, so the lists show a caller what it may use. Unset: everything (stdio).
   */
  scopes?: readonly string[];
  /**
   * The client is the user's own, over stdio: with CRM_READ_ROOTS=1 the folders it offers as MCP
   * roots become readable. Never set over HTTP.
   */
  clientRoots?: boolean;
}

export const SERVER_INSTRUCTIONS = `Tools for a Korean messaging and recommendation service (campaign metrics, export files, product recommendations).
Workflow: 1) campaign_metrics to find and rank campaigns in a period (its campaigns[]._id feeds the next step); 2) start_export to create an export (campaign raw events as CSV, or scenario daily metrics as XLSX) - it waits up to wait_seconds and downloads the file; 3) if it returns before the job finishes, call check_export with the job_id it gives (repeat until done); 4) summarize_export with the job_id to analyse the file; 5) query_export with job_ids for any other question (one read-only SQL query; without sql it describes the tables and gives example queries).
Export budget: the service allows ${EXPORT_CREATE_LIMIT} export-job creations per ${EXPORT_CREATE_WINDOW_SECONDS / 60} minutes per application. Reuse jobs (check_export without job_id lists them; identical requests are answered from the local ledger) and use force only when a new job is really needed.
Polling rule: export jobs are polled at most every ${MIN_POLL_INTERVAL_SECONDS} seconds and usually take tens of seconds to several minutes; do not call check_export in a tight loop - use its wait_seconds.
Dates: export ranges are calendar dates in the application's time zone; campaign_metrics windows are read in KST (at most ${MAX_METRICS_WINDOW_DAYS} days per request, split automatically).`;

/** The names of the server's tools (serve --http names them in the record of a refused request). */
export const TOOL_NAMES: readonly string[] = TOOLS.map((tool) => tool.name);

/** Builds the MCP server: the tools of src/tools, resources of src/resources, prompts of src/prompts, instructions. */
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
  if (deps.clientRoots === true && config.readRoots) followClientRoots(server, runtime.clientRoots);
  registerSetLevel(server, logLevelsOf(runtime));
  registerTools(
    server,
    TOOLS.filter((tool) => allows(deps.scopes, toolScope(tool.name))),
    runtime,
  );
  if (allows(deps.scopes, "crm.read")) {
    registerResources(server, runtime);
    registerPrompts(server, runtime);
  }
  return {
    server,
    runtime,
    async close() {
      await server.close();
      if (ownsRuntime) await runtime.close();
    },
  };
}
