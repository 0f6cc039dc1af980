import { userInfo } from "node:os";
import type { AuthInfo, ServerContext } from "@modelcontextprotocol/server";
import type { AuditCaller } from "../audit/index.js";

/**
 * Who makes a request, as the audit trail, the ledger and the MCP log levels know them. Over
 * HTTP the auth gate decided (http/auth-gate.ts): a static token by its name, an OAuth caller as
 * `oauth:<claim value>` with the issuer, subject and client behind it; on a loopback server
 * without tokens `anonymous`; on stdio the local user, `local:<login name>`. A static token's
 * name cannot hold a `:`, so no kind's names can meet another's.
 */
export function callerIdentityOf(ctx: Pick<ServerContext, "http">): AuditCaller {
  if (ctx.http === undefined) return localCaller();
  return callerOfAuth(ctx.http.authInfo);
}

/** The caller's name (the ledger's created_by, `audit --caller`). */
export function callerOf(ctx: Pick<ServerContext, "http">): string {
  return callerIdentityOf(ctx).name;
}

/**
 * One caller's key for what is kept per caller (the MCP log level): the whole identity, so an
 * OAuth user's two clients, each setting its own level, keep theirs.
 */
export function callerKeyOf(ctx: Pick<ServerContext, "http">): string {
  const caller = callerIdentityOf(ctx);
  return JSON.stringify([caller.kind, caller.name, caller.issuer, caller.subject, caller.clientId]);
}

/** The caller of an HTTP request from the AuthInfo the gate gave it (none: anonymous). */
export function callerOfAuth(auth: AuthInfo | undefined): AuditCaller {
  if (auth === undefined) return { kind: "anonymous", name: "anonymous" };
  const extra = auth.extra ?? {};
  if (extra.caller_kind !== "oauth") return { kind: "token", name: auth.clientId };
  return {
    kind: "oauth",
    name: auth.clientId,
    issuer: text(extra.issuer),
    subject: text(extra.subject),
    clientId: text(extra.client_id),
  };
}

function text(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

let local: AuditCaller | undefined;

export function localCaller(): AuditCaller {
  if (local === undefined) {
    try {
      local = { kind: "local", name: `local:${userInfo().username}` };
    } catch {
      // No entry for this user id (some containers).
      local = { kind: "local", name: "local" };
    }
  }
  return local;
}
