import type { CallToolResult, ServerContext } from "@modelcontextprotocol/server";
import type { AuditOutcome } from "../audit/index.js";
import { log } from "../log.js";
import { callerIdentityOf } from "./caller.js";
import type { ToolRuntime } from "./tool.js";

/**
 * Runs one tool call and records it in the audit trail: when, who, which tool, the arguments as
 * given (the trail masks and bounds them), how it ended and how long it took. `work` reports the
 * error it turned into an `isError` result through `failed`, so the trail names its kind.
 */
export async function withAudit(
  runtime: ToolRuntime,
  tool: string,
  args: unknown,
  ctx: ServerContext,
  work: (failed: (error: unknown) => void) => Promise<CallToolResult>,
): Promise<CallToolResult> {
  const at = Date.now();
  const started = performance.now();
  let failure: unknown;
  let failed = false;
  let outcome: AuditOutcome = "error";
  try {
    const result = await work((error) => {
      failed = true;
      failure = error;
    });
    outcome = result.isError !== true ? "ok" : cancelled(failure, ctx) ? "cancelled" : "error";
    return result;
  } catch (error) {
    failed = true;
    failure = error;
    outcome = cancelled(error, ctx) ? "cancelled" : "error";
    throw error;
  } finally {
    // Never into the call: a record that cannot be made is logged, and the call's own result or
    // error stands.
    try {
      await runtime.audit.record({
        at,
        caller: callerIdentityOf(ctx),
        tool,
        args,
        outcome,
        ...(outcome === "ok" ? {} : { error: failed ? kindOf(failure) : "error result" }),
        durationMs: performance.now() - started,
      });
    } catch (error) {
      log.warn("audit trail not written", { tool, error: kindOf(error) });
    }
  }
}

function cancelled(error: unknown, ctx: ServerContext): boolean {
  return (
    ctx.mcpReq.signal.aborted || (error instanceof Error && error.name === "ToolCancelledError")
  );
}

/** The error's class name: what kind of failure, never its message (which may quote input). */
function kindOf(error: unknown): string {
  if (error instanceof Error) return error.name === "Error" ? error.constructor.name : error.name;
  return typeof error;
}
