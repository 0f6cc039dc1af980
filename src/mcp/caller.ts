import { userInfo } from "node:os";
import type { ServerContext } from "@modelcontextprotocol/server";

/**
 * Who makes a request, as the audit trail and the ledger name them: over HTTP the name the auth
 * gate gave (the access token's subject, or the static token's name), `anonymous` on a loopback
 * server without tokens; on stdio the local user, `local:<login name>`.
 */
export function callerOf(ctx: Pick<ServerContext, "http">): string {
  const auth = ctx.http?.authInfo;
  if (auth !== undefined) return auth.clientId;
  return ctx.http === undefined ? localCaller() : "anonymous";
}

let local: string | undefined;

export function localCaller(): string {
  if (local === undefined) {
    try {
      local = `local:${userInfo().username}`;
    } catch {
      // No entry for this user id (some containers).
      local = "local";
    }
  }
  return local;
}
