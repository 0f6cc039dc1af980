import { AsyncLocalStorage } from "node:async_hooks";
import type { LoggingLevel, ServerContext } from "@modelcontextprotocol/server";
import { addLogForwarder, type LogLevel } from "../log.js";
import { redact } from "../redact.js";
import { callerKeyOf } from "./caller.js";
import type { CallerLogLevels } from "./log-levels.js";

type SendLog = ServerContext["mcpReq"]["log"];

/**
 * MCP logging: what the server logs while it works on a request goes to the client that made the
 * request, through the SDK's per-request `log` (which applies the level a 2026-07-28 client sends
 * with each request), at or above the level the caller set with logging/setLevel (log-levels.ts).
 * Messages outside any request (the process starting, a background download) stay on stderr
 * only. Redacted like stderr.
 */
interface CallLog {
  send: SendLog;
  /** Sent before the call's result, so a client sees a call's messages before its answer. */
  pending: Array<Promise<void>>;
}

const current = new AsyncLocalStorage<CallLog>();

const MCP_LEVEL: Record<LogLevel, LoggingLevel> = {
  debug: "debug",
  info: "info",
  warn: "warning",
  error: "error",
};

let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  addLogForwarder((level, message, fields) => {
    const call = current.getStore();
    if (call === undefined) return;
    // `log` names the event; the fields keep their own names (a field may be called message).
    const data = JSON.parse(redact(JSON.stringify({ log: message, ...fields }))) as unknown;
    call.pending.push(
      // Best effort: a closed transport must not fail the work that logged.
      call.send(MCP_LEVEL[level], data, "crm-insights-mcp").catch(() => {}),
    );
  });
}

/**
 * Runs `work` with the request's logger as the target of `log.*` calls made inside it; messages
 * below the level the caller set with logging/setLevel (see log-levels.ts) are not sent.
 */
export async function withCallLog<T>(
  ctx: ServerContext,
  work: () => Promise<T>,
  levels?: CallerLogLevels,
): Promise<T> {
  install();
  const caller = callerKeyOf(ctx);
  const send: SendLog = (level, data, logger) =>
    levels === undefined || levels.passes(caller, level)
      ? ctx.mcpReq.log(level, data, logger)
      : Promise.resolve();
  const call: CallLog = { send, pending: [] };
  const result = await current.run(call, work);
  await Promise.allSettled(call.pending);
  return result;
}
