import type { AuditCaller, AuditTrail } from "../audit/index.js";

/**
 * Records in the audit trail a request refused for want of a scope: its calls never ran, but who
 * tried to call what is what an audit is for. One record per request, whatever its size: a
 * single call as itself (its tool and arguments), a batch as `(batch)` with how many messages
 * and calls it held and which of the server's tools they named, so a batch of thousands of calls
 * adds one record (and the trail's rate limit bounds how many requests are recorded). A request
 * without a tool call (resources/read, prompts/get) is not a tool call and leaves none.
 *
 * Not awaited by the request: the trail never rejects, and a refusal must not hold one of the
 * server's concurrency slots while the record is written.
 */
export function recordRefusedRequest(
  audit: AuditTrail,
  caller: AuditCaller,
  body: unknown,
  now: number,
  knownTools: readonly string[],
): Promise<void> {
  const messages = Array.isArray(body) ? body : [body];
  const calls = messages.filter(isToolCall);
  const first = calls[0];
  if (first === undefined) return Promise.resolve();
  const denial = {
    at: now,
    caller,
    outcome: "denied" as const,
    error: "insufficient_scope",
    durationMs: 0,
  };
  if (!Array.isArray(body)) {
    const { name, arguments: args } = first.params;
    return audit.record({
      ...denial,
      tool: typeof name === "string" ? name : "(no name)",
      args: args ?? {},
    });
  }
  const named = calls.map((call) => call.params.name);
  const known = new Set(named.filter((name): name is string => isKnown(name, knownTools)));
  return audit.record({
    ...denial,
    tool: "(batch)",
    args: {
      messages: messages.length,
      tool_calls: calls.length,
      tools: [...known].sort(),
      unknown_tools: named.filter((name) => !isKnown(name, knownTools)).length,
    },
  });
}

interface ToolCallMessage {
  method: "tools/call";
  params: { name?: unknown; arguments?: unknown };
}

function isToolCall(message: unknown): message is ToolCallMessage {
  if (typeof message !== "object" || message === null) return false;
  const { method, params } = message as { method?: unknown; params?: unknown };
  return method === "tools/call" && typeof params === "object" && params !== null;
}

function isKnown(name: unknown, knownTools: readonly string[]): boolean {
  return typeof name === "string" && knownTools.includes(name);
}
