import type { AuditTrail } from "../audit/index.js";

/**
 * Records in the audit trail the tool calls of a request refused for want of a scope: they never
 * ran, but who tried to call what is what an audit is for.
 */
export async function recordDeniedCalls(
  audit: AuditTrail,
  caller: string,
  body: unknown,
  now: number,
): Promise<void> {
  const messages = Array.isArray(body) ? body : [body];
  for (const message of messages) {
    if (typeof message !== "object" || message === null) continue;
    const { method, params } = message as { method?: unknown; params?: unknown };
    if (method !== "tools/call" || typeof params !== "object" || params === null) continue;
    const { name, arguments: args } = params as { name?: unknown; arguments?: unknown };
    await audit.record({
      at: now,
      caller,
      tool: typeof name === "string" ? name : "(no name)",
      args: args ?? {},
      outcome: "denied",
      error: "insufficient_scope",
      durationMs: 0,
    });
  }
}
