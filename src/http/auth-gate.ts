import type { ServerResponse } from "node:http";
import type { AuthInfo } from "@modelcontextprotocol/server";
import type { AuditTrail } from "../audit/index.js";
import { log } from "../log.js";
import { missingScopes, SCOPES } from "../mcp/scopes.js";
import { bearer, reply, rpcError } from "./http-messages.js";
import {
  AccessTokenVerifier,
  InvalidTokenError,
  IssuerUnavailableError,
  RefusedTokenError,
} from "./oauth/access-token-verifier.js";
import { bearerChallenge, type Challenge } from "./oauth/challenge.js";
import type { OAuthSettings } from "./oauth/oauth-settings.js";
import {
  metadataPaths,
  metadataUrl,
  protectedResourceMetadata,
} from "./oauth/protected-resource.js";
import { findToken, type HttpToken } from "./tokens.js";

/**
 * Who may call `/mcp`, and what: static bearer tokens (CRM_HTTP_TOKENS), the authorization
 * server's JWT access tokens (CRM_OAUTH_ISSUER), either or both. The caller becomes the request's
 * AuthInfo: `clientId` is the caller's name, the one the audit trail and the ledger record: the
 * static token's name, or `oauth:` and the access token's caller claim (`sub` by default), so
 * `sub: "ops-bot"` is never the static token `ops-bot`; `extra` says which kind and, for OAuth,
 * the issuer, subject and client behind the name (mcp/caller.ts reads it). `token` is never the
 * token, which goes nowhere past this gate. The scopes a request needs are checked here too,
 * before it is dispatched.
 */
export interface AuthGateOptions {
  tokens: readonly HttpToken[];
  oauth: OAuthSettings | undefined;
  /** The URL clients use for `/mcp` (CRM_PUBLIC_URL, else the listening address), once known. */
  resource: () => string;
  /** The clock access tokens are judged by (epoch ms). */
  now?: () => number;
  /** Where a token the issuer signed but this server refuses is recorded. */
  audit?: AuditTrail | undefined;
}

/** An HTTP answer the gate gives instead of letting the request through. */
export interface GateAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export type Authentication =
  /** Nothing is checked: loopback without tokens or OAuth. */
  { kind: "open" } | { kind: "caller"; auth: AuthInfo } | { kind: "refused"; answer: GateAnswer };

const REALM = "crm-insights-mcp";
/** Before an OAuth caller's name: a static token's name cannot hold a `:`. */
export const OAUTH_PREFIX = "oauth:";
/** A static token is the operator's to rotate; a day ahead satisfies the SDK's expiry check. */
const STATIC_TOKEN_LIFETIME_S = 86_400;

export class AuthGate {
  /** True when every request to `/mcp` needs a token. */
  readonly required: boolean;
  private readonly now: () => number;
  private verifier: AccessTokenVerifier | undefined;

  constructor(private readonly options: AuthGateOptions) {
    this.required = options.tokens.length > 0 || options.oauth !== undefined;
    this.now = options.now ?? Date.now;
  }

  /** The `aud` access tokens must carry. */
  audience(): string {
    return this.options.oauth?.audience ?? this.options.resource();
  }

  async authenticate(authorization: string | undefined): Promise<Authentication> {
    if (!this.required) return { kind: "open" };
    const presented = bearer(authorization);
    if (presented === undefined) {
      return this.unauthorized(
        {},
        this.options.oauth === undefined
          ? "Unauthorized: send Authorization: Bearer <token> (ask the server's operator for a token)."
          : "Unauthorized: log in with the authorization server named in this server's resource metadata, and send its access token as Authorization: Bearer <token>.",
      );
    }
    const known = findToken(this.options.tokens, presented);
    if (known !== undefined) {
      return {
        kind: "caller",
        auth: {
          token: "[bearer]",
          clientId: known.name,
          scopes: [...known.scopes],
          expiresAt: Math.floor(this.now() / 1000) + STATIC_TOKEN_LIFETIME_S,
          extra: { caller_kind: "token" },
        },
      };
    }
    if (this.options.oauth === undefined) {
      return this.unauthorized(
        { error: "invalid_token" },
        "Unauthorized: the bearer token is not accepted (revoked or mistyped).",
      );
    }
    return this.verifyAccessToken(presented, this.options.oauth);
  }

  /**
   * The 403 for a request (one JSON-RPC message or a batch) that needs a scope the caller lacks,
   * naming the scopes to ask for; undefined when it may go on.
   */
  scopeRefusal(auth: AuthInfo | undefined, body: unknown): GateAnswer | undefined {
    if (auth === undefined) return undefined;
    const missing = missingScopes(body, auth.scopes);
    if (missing.length === 0) return undefined;
    const needs = `This request needs the ${missing.join(" and ")} scope${missing.length > 1 ? "s" : ""}`;
    return {
      status: 403,
      headers: {
        "WWW-Authenticate": bearerChallenge({
          ...this.challengeBase(),
          error: "insufficient_scope",
          scopes: this.advertised(missing),
          description: `${needs}.`,
        }),
      },
      body: rpcError(
        -32001,
        `Forbidden: ${needs}, which the token of ${auth.clientId} does not carry. ${
          this.options.oauth === undefined
            ? "Ask the server's operator for a token with it."
            : "Log in again asking for it (your client does this on this answer if it can)."
        }`,
      ),
    };
  }

  /** RFC 9728 metadata at its well-known paths (OAuth mode); undefined for any other path. */
  metadata(path: string, method: string | undefined): GateAnswer | undefined {
    const oauth = this.options.oauth;
    if (oauth === undefined) return undefined;
    const resource = this.options.resource();
    if (!metadataPaths(resource).has(path)) return undefined;
    // Public and read by browser-based clients before they have any token.
    const cors = { "Access-Control-Allow-Origin": "*" };
    if (method === "OPTIONS") {
      return {
        status: 204,
        headers: {
          ...cors,
          "Access-Control-Allow-Methods": "GET, HEAD, OPTIONS",
          "Access-Control-Allow-Headers": "Authorization, MCP-Protocol-Version, Content-Type",
          "Access-Control-Max-Age": "600",
        },
        body: undefined,
      };
    }
    if (method !== "GET" && method !== "HEAD") {
      return {
        status: 405,
        headers: { ...cors, Allow: "GET, HEAD, OPTIONS" },
        body: { error: "GET only" },
      };
    }
    return {
      status: 200,
      headers: { ...cors, "Cache-Control": "public, max-age=300" },
      body: protectedResourceMetadata(resource, oauth.issuer, this.advertised(SCOPES)),
    };
  }

  private async verifyAccessToken(token: string, oauth: OAuthSettings): Promise<Authentication> {
    this.verifier ??= new AccessTokenVerifier({
      issuer: oauth.issuer,
      audience: this.audience(),
      scopePrefix: oauth.scopePrefix,
      callerClaim: oauth.callerClaim,
      requireAtJwt: oauth.requireAtJwt,
      now: this.now,
      ...(oauth.jwksCooldownMs === undefined ? {} : { jwksCooldownMs: oauth.jwksCooldownMs }),
    });
    try {
      const verified = await this.verifier.verify(token);
      const resource = this.options.resource();
      return {
        kind: "caller",
        auth: {
          token: "[bearer]",
          clientId: `${OAUTH_PREFIX}${verified.caller}`,
          scopes: verified.scopes,
          expiresAt: verified.expiresAt,
          resource: new URL(resource),
          resourceMetadataUrl: metadataUrl(resource),
          extra: {
            caller_kind: "oauth",
            issuer: oauth.issuer,
            subject: verified.subject,
            ...(verified.clientId === undefined ? {} : { client_id: verified.clientId }),
          },
        },
      };
    } catch (error) {
      if (error instanceof InvalidTokenError) {
        log.info("access token refused", { reason: error.message });
        if (error instanceof RefusedTokenError) this.recordRefusal(error, oauth);
        return this.unauthorized(
          { error: "invalid_token", description: error.message },
          `Unauthorized: ${error.message}`,
        );
      }
      if (error instanceof IssuerUnavailableError) {
        log.warn("cannot verify access tokens", { issuer: oauth.issuer, error: error.message });
        return {
          kind: "refused",
          answer: {
            status: 503,
            headers: { "Retry-After": "5" },
            body: rpcError(
              -32000,
              "The authorization server cannot be reached to verify the token; retry in a few seconds.",
            ),
          },
        };
      }
      throw error;
    }
  }

  /**
   * Leaves a record of a token the issuer signed for this server but this server refuses (an ID
   * token, a subject that is not a name, issued in the future): someone holds such tokens, and
   * the record says whose. Not awaited; the trail's rate limit bounds how many are written.
   */
  private recordRefusal(error: RefusedTokenError, oauth: OAuthSettings): void {
    const { subject, clientId } = error.claims;
    const usable = typeof subject === "string" && subject.trim() !== "";
    const shown = typeof subject === "string" ? subject : (JSON.stringify(subject) ?? "undefined");
    void this.options.audit?.record({
      at: this.now(),
      caller: {
        kind: "oauth",
        name: `${OAUTH_PREFIX}${usable ? subject : "(no usable sub)"}`,
        issuer: oauth.issuer,
        subject: shown,
        clientId,
      },
      tool: "(access token)",
      args: { reason: error.message },
      outcome: "denied",
      error: "invalid_token",
      durationMs: 0,
    });
  }

  /** Scope names as clients must ask the authorization server for them. */
  private advertised(scopes: readonly string[]): string[] {
    const prefix = this.options.oauth?.scopePrefix ?? "";
    return scopes.map((s) => `${prefix}${s}`);
  }

  private challengeBase(): Challenge {
    return this.options.oauth === undefined
      ? { realm: REALM }
      : { resourceMetadata: metadataUrl(this.options.resource()) };
  }

  private unauthorized(challenge: Challenge, message: string): Authentication {
    return {
      kind: "refused",
      answer: {
        status: 401,
        headers: {
          "WWW-Authenticate": bearerChallenge({
            ...this.challengeBase(),
            // The scopes to ask for at login (OAuth mode): all of them; the authorization
            // server's policy grants each user what they may have.
            ...(this.options.oauth === undefined ? {} : { scopes: this.advertised(SCOPES) }),
            ...challenge,
          }),
        },
        body: rpcError(-32001, message),
      },
    };
  }
}

/** Writes a gate's answer. */
export function sendAnswer(res: ServerResponse, answer: GateAnswer): void {
  for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
  if (answer.body === undefined) {
    res.writeHead(answer.status);
    res.end();
    return;
  }
  reply(res, answer.status, answer.body);
}
