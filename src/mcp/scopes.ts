/**
 * The OAuth scopes of `serve --http` and what each MCP request needs of them. A caller whose
 * token carries no scopes at all is not authorized by scope (stdio, HTTP on loopback without
 * tokens): `granted` is then `undefined` and everything is allowed.
 */
export const SCOPES = ["crm.read", "crm.export", "crm.query"] as const;
export type Scope = (typeof SCOPES)[number];

/** Tools that need more than reading; every other tool needs crm.read. */
const TOOL_SCOPES: Readonly<Record<string, Scope>> = {
  // Spends the application's export budget.
  start_export: "crm.export",
  // Runs arbitrary read-only SQL over customers' events.
  query_export: "crm.query",
};

/**
 * Requests that read what crm.read covers besides the tools: resources, prompts, and the
 * completion of their arguments. Listing them is not here: a list shows a caller what it may
 * use (empty without crm.read) instead of refusing, so a client does not ask its user to
 * authorize more just because it lists everything on connect.
 */
const READ_METHODS = new Set([
  "resources/read",
  "resources/subscribe",
  "resources/unsubscribe",
  "prompts/get",
  "completion/complete",
]);

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** The scope a tool needs (an unknown name needs crm.read: nobody without it learns more). */
export function toolScope(tool: string): Scope {
  return TOOL_SCOPES[tool] ?? "crm.read";
}

/** True when `granted` (undefined: no scope authorization in force) includes `scope`. */
export function allows(granted: readonly string[] | undefined, scope: Scope): boolean {
  return granted === undefined || granted.includes(scope);
}

/**
 * The scope one JSON-RPC request needs, decided from its method and params alone (before it is
 * dispatched), or undefined when any authenticated caller may make it: initialize, ping, the
 * lists, logging, notifications and responses.
 */
export function requestScope(message: unknown): Scope | undefined {
  if (typeof message !== "object" || message === null) return undefined;
  const { method, params } = message as { method?: unknown; params?: unknown };
  if (method === "tools/call") {
    const name =
      typeof params === "object" && params !== null
        ? (params as { name?: unknown }).name
        : undefined;
    return toolScope(typeof name === "string" ? name : "");
  }
  return typeof method === "string" && READ_METHODS.has(method) ? "crm.read" : undefined;
}

/**
 * The scopes a request body (one JSON-RPC message or a batch) needs that `granted` lacks, in
 * SCOPES order; empty when it may go on. A batch is refused as a whole when any of its requests
 * is, so no part of it runs before the caller has the scopes for all of it.
 */
export function missingScopes(body: unknown, granted: readonly string[] | undefined): Scope[] {
  const messages = Array.isArray(body) ? body : [body];
  const needed = new Set(messages.map(requestScope));
  return SCOPES.filter((scope) => needed.has(scope) && !allows(granted, scope));
}
