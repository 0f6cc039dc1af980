import type { LoggingLevel, McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { clipValue } from "../clip.js";
import { callerKeyOf } from "./caller.js";
import type { ToolRuntime } from "./tool.js";

/**
 * The minimum level of the MCP log messages (`notifications/message`) a caller receives, as set
 * with `logging/setLevel`.
 *
 * The SDK keeps that level on the server instance. Over stdio an instance lives as long as the
 * connection, but `serve --http` builds a new instance for every request, so the level a 2025-era
 * client set was gone by its next request, which then got every debug message. The level is kept
 * here instead, by caller, beside the runtime the process's server instances share (one per
 * process: the stdio connection, or every request of `serve --http`), keyed by the caller's
 * whole identity as caller.ts gives it (a static token, or an OAuth subject and client: the same
 * name in both is two callers; one key for all callers when no token is checked).
 * In the 2026-07-28 protocol the client sends the level with each request (`_meta`), and the SDK
 * applies that; a level set here narrows it further.
 */
export const LOGGING_LEVELS = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
] as const satisfies readonly LoggingLevel[];

export class CallerLogLevels {
  private readonly levels = new Map<string, LoggingLevel>();

  /** `caller`: callerKeyOf(ctx). */
  set(caller: string, level: LoggingLevel): void {
    this.levels.set(caller, level);
  }

  /** Whether a message of `level` reaches `caller` (every level until the caller sets one). */
  passes(caller: string, level: LoggingLevel): boolean {
    const minimum = this.levels.get(caller);
    return (
      minimum === undefined || LOGGING_LEVELS.indexOf(level) >= LOGGING_LEVELS.indexOf(minimum)
    );
  }
}

const BY_RUNTIME = new WeakMap<ToolRuntime, CallerLogLevels>();

/** The levels kept for the server instances of one runtime. */
export function logLevelsOf(runtime: ToolRuntime): CallerLogLevels {
  let levels = BY_RUNTIME.get(runtime);
  if (levels === undefined) {
    levels = new CallerLogLevels();
    BY_RUNTIME.set(runtime, levels);
  }
  return levels;
}

const SET_LEVEL_PARAMS = z.object({
  level: z.enum(LOGGING_LEVELS, {
    error: (issue) =>
      `must be one of ${LOGGING_LEVELS.join(", ")}${issue.input === undefined ? "" : `, not ${clipValue(JSON.stringify(issue.input) ?? String(issue.input), 40)}`}`,
  }),
});

/**
 * Answers `logging/setLevel` for this server instance, keeping the level in `levels`. Registered
 * with our own params schema, so a level that is not one of the eight is refused as invalid
 * params (-32602) saying which levels exist, where the SDK's built-in handler answered -32603
 * with its schema's raw issue list.
 */
export function registerSetLevel(server: McpServer, levels: CallerLogLevels): void {
  server.server.setRequestHandler(
    "logging/setLevel",
    { params: SET_LEVEL_PARAMS },
    (params, ctx) => {
      levels.set(callerKeyOf(ctx), params.level);
      return {};
    },
  );
}
