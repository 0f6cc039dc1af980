import { isLoopbackHost } from "../../loopback-host.js";

/**
 * OAuth resource-server settings of `serve --http`, from CRM_OAUTH_ISSUER, CRM_OAUTH_AUDIENCE
 * and CRM_PUBLIC_URL (a pure function of the environment, like the other settings).
 */
export interface OAuthSettings {
  /** The authorization server's issuer identifier, exactly as its metadata states it. */
  issuer: string;
  /** The `aud` a token must carry; undefined: the public URL of `/mcp`. */
  audience: string | undefined;
  /**
   * CRM_OAUTH_SCOPE_PREFIX: put before the scope names clients are told to ask for (Entra ID
   * wants `api://<app id>/crm.read`); a token's scopes count with or without it.
   */
  scopePrefix?: string | undefined;
  /**
   * CRM_OAUTH_CALLER_CLAIM: the claim that names the caller in the audit trail and the ledger
   * (default `sub`; a token without it is named by `sub`).
   */
  callerClaim?: string | undefined;
  /**
   * CRM_OAUTH_REQUIRE_AT_JWT=1: only tokens whose `typ` header is `at+jwt` (RFC 9068), for
   * issuers that mark their access tokens so; otherwise `JWT` (Entra ID, Keycloak) and no `typ`
   * are taken too, and ID tokens are told apart by their claims.
   */
  requireAtJwt?: boolean;
  /**
   * After a JWKS fetch, how long a token with an unknown key id is refused without fetching
   * again; default 30 s (see VerifierOptions).
   */
  jwksCooldownMs?: number;
}

export interface PublicUrlSetting {
  /** CRM_PUBLIC_URL as the URL of the MCP endpoint (`.../mcp`); undefined: the listening address. */
  publicUrl: string | undefined;
}

export class OAuthConfigError extends Error {
  override name = "OAuthConfigError";
}

/** The OAuth settings, or undefined when CRM_OAUTH_ISSUER is unset (static tokens only). */
export function loadOAuthSettings(env: NodeJS.ProcessEnv): OAuthSettings | undefined {
  const issuer = text(env.CRM_OAUTH_ISSUER);
  const audience = text(env.CRM_OAUTH_AUDIENCE);
  if (issuer === undefined) {
    if (audience !== undefined) {
      throw new OAuthConfigError(
        "CRM_OAUTH_AUDIENCE is set without CRM_OAUTH_ISSUER: set the issuer too (e.g. CRM_OAUTH_ISSUER=https://login.example.com/oauth2/default), or remove the audience.",
      );
    }
    return undefined;
  }
  const url = parseUrl(issuer, "CRM_OAUTH_ISSUER", "https://login.example.com/oauth2/default");
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopbackHost(url.hostname))) {
    throw new OAuthConfigError(
      `CRM_OAUTH_ISSUER must be an https:// URL (http:// only on a loopback host, for testing); got ${url.protocol}//${url.host}.`,
    );
  }
  if (url.search !== "" || url.hash !== "") {
    throw new OAuthConfigError(
      "CRM_OAUTH_ISSUER must not have a query or fragment (RFC 8414): give the issuer exactly as its /.well-known/openid-configuration states it.",
    );
  }
  const scopePrefix = text(env.CRM_OAUTH_SCOPE_PREFIX);
  if (scopePrefix !== undefined && !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scopePrefix)) {
    throw new OAuthConfigError(
      "CRM_OAUTH_SCOPE_PREFIX must be printable, without spaces, quotes or backslashes (e.g. api://0b7c.../).",
    );
  }
  const callerClaim = text(env.CRM_OAUTH_CALLER_CLAIM);
  if (callerClaim !== undefined && !/^[A-Za-z0-9_.:/-]{1,100}$/.test(callerClaim)) {
    throw new OAuthConfigError(
      "CRM_OAUTH_CALLER_CLAIM must be a claim name (letters, digits, _ . : / -), e.g. oid.",
    );
  }
  const requireAtJwt = flag(env.CRM_OAUTH_REQUIRE_AT_JWT, "CRM_OAUTH_REQUIRE_AT_JWT");
  return {
    issuer,
    audience,
    ...(scopePrefix === undefined ? {} : { scopePrefix }),
    ...(callerClaim === undefined ? {} : { callerClaim }),
    ...(requireAtJwt ? { requireAtJwt } : {}),
  };
}

/** `1`/`true`/`yes` or `0`/`false`/`no` (any case); unset or blank is false. */
function flag(value: string | undefined, name: string): boolean {
  const word = text(value)?.toLowerCase();
  if (word === undefined || ["0", "false", "no"].includes(word)) return false;
  if (["1", "true", "yes"].includes(word)) return true;
  throw new OAuthConfigError(
    `${name} must be 1 or 0 (true or false); got "${value?.trim().slice(0, 20)}". Example of a good value: ${name}=1`,
  );
}

/**
 * CRM_PUBLIC_URL: the URL clients use for the MCP endpoint (behind a proxy). A URL without a
 * path means the endpoint `/mcp` on it.
 */
export function loadPublicUrl(env: NodeJS.ProcessEnv): PublicUrlSetting {
  const raw = text(env.CRM_PUBLIC_URL);
  if (raw === undefined) return { publicUrl: undefined };
  const url = parseUrl(raw, "CRM_PUBLIC_URL", "https://crm-mcp.example.com/mcp");
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new OAuthConfigError(`CRM_PUBLIC_URL must be an http(s) URL; got ${url.protocol}.`);
  }
  if (url.search !== "" || url.hash !== "") {
    throw new OAuthConfigError(
      "CRM_PUBLIC_URL must not have a query or fragment: give the URL of the MCP endpoint, e.g. https://crm-mcp.example.com/mcp.",
    );
  }
  if (url.pathname === "/") url.pathname = "/mcp";
  return { publicUrl: url.href.replace(/\/$/, "") };
}

function parseUrl(value: string, name: string, example: string): URL {
  try {
    return new URL(value);
  } catch {
    throw new OAuthConfigError(`${name} is not a URL. Example of a good value: ${name}=${example}`);
  }
}

function text(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === "" ? undefined : trimmed;
}
