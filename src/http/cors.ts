import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * Browser pages on other origins calling `/mcp` (CORS), for the exact origins listed in
 * CRM_HTTP_ALLOWED_ORIGINS. A request that carries any other Origin is refused with 403 and
 * no CORS headers, which is also the DNS-rebinding protection: a page reached through a
 * rebound name carries its own origin, never a listed one. Requests without Origin (every
 * non-browser client) and those from the server's own origin are not CORS requests and pass
 * untouched.
 *
 * Origins are compared whole (scheme, host and port), never by host name alone: a page on
 * another port of the same machine is another site. `*` is never sent: the endpoint takes
 * bearer tokens, and a wildcard would let any page that holds one call it.
 */

/** What a browser may send: the methods the Streamable HTTP transport uses. */
export const CORS_ALLOW_METHODS = "POST, GET, DELETE, OPTIONS";

/**
 * The request headers MCP clients send. No `Mcp-Session-Id`: the server is stateless and never
 * hands out a session, so a client never has one to send.
 */
export const CORS_ALLOW_HEADERS = [
  "Authorization",
  "Content-Type",
  "Accept",
  "MCP-Protocol-Version",
  "Mcp-Method",
  "Mcp-Name",
  "Last-Event-ID",
].join(", ");

/**
 * Response headers a client reads: the negotiated version, a session (a proxy in front may add
 * one) and the authentication challenge of a 401.
 */
export const CORS_EXPOSE_HEADERS = [
  "Mcp-Session-Id",
  "MCP-Protocol-Version",
  "WWW-Authenticate",
].join(", ");

/** How long a browser may keep a preflight's answer: short, so a changed list reaches it soon. */
export const CORS_MAX_AGE_SECONDS = 600;

export class OriginConfigError extends Error {
  override name = "OriginConfigError";
}

const VARIABLE = "CRM_HTTP_ALLOWED_ORIGINS";

/**
 * Parses CRM_HTTP_ALLOWED_ORIGINS: comma-separated origins as a browser sends them in `Origin`
 * (`https://app.example.com`, `http://localhost:8080`). Unset or blank: none. A host name
 * without a scheme, a path, a wildcard or `null` is refused with what to write instead.
 */
export function parseAllowedOrigins(raw: string | undefined): string[] {
  if (raw === undefined || raw.trim() === "") return [];
  const origins: string[] = [];
  raw.split(",").forEach((part, index) => {
    const entry = part.trim();
    const where = `${VARIABLE} entry ${index + 1}`;
    if (entry === "") throw new OriginConfigError(`${where} is empty; remove the extra comma.`);
    const origin = originOf(entry);
    if (typeof origin !== "string")
      throw new OriginConfigError(`${where} "${entry}" ${origin.problem}`);
    if (!origins.includes(origin)) origins.push(origin);
  });
  return origins;
}

const EXAMPLE =
  "write the scheme, host and port a browser shows, e.g. https://app.example.com or http://localhost:8080";

function originOf(entry: string): string | { problem: string } {
  if (entry.includes("*")) {
    return { problem: `is a wildcard; list each origin allowed (${EXAMPLE}).` };
  }
  if (entry.toLowerCase() === "null") {
    return { problem: `would allow sandboxed and file pages; list real origins (${EXAMPLE}).` };
  }
  if (!entry.includes("://")) {
    // The variable once took host names; say how to write one as an origin.
    return {
      problem: `has no scheme; write it as a browser sends it: https://${entry} (or http://${entry} for a page served over plain HTTP).`,
    };
  }
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return { problem: `is not an origin; ${EXAMPLE}.` };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return { problem: `is not an http or https origin; ${EXAMPLE}.` };
  }
  if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") {
    return { problem: `has more than an origin; ${EXAMPLE}.` };
  }
  if (url.pathname !== "/") {
    return { problem: `has a path; an origin ends after the host and port (${EXAMPLE}).` };
  }
  return url.origin;
}

export type CorsDecision =
  /** No Origin header, or the request's own origin: not a cross-origin request. */
  { kind: "none" } | { kind: "allowed"; origin: string } | { kind: "refused"; origin: string };

export function corsDecision(req: IncomingMessage, allowed: readonly string[]): CorsDecision {
  const origin = req.headers.origin;
  if (origin === undefined || origin === "") return { kind: "none" };
  // Browsers send the serialized origin; a different spelling is not one of the listed pages.
  if (allowed.includes(origin)) return { kind: "allowed", origin };
  return sameOrigin(origin, req.headers.host) ? { kind: "none" } : { kind: "refused", origin };
}

/**
 * An Origin naming the very host and port the request was sent to (the Host header, checked
 * against the allowed hosts before this) is the server's own origin: same-origin, not CORS. A
 * rebound name cannot pose as it, since its Host is the attacker's name, refused by that check.
 */
function sameOrigin(origin: string, host: string | undefined): boolean {
  if (host === undefined || host === "") return false;
  try {
    const from = new URL(origin);
    if (from.protocol !== "http:" && from.protocol !== "https:") return false;
    // The origin's scheme gives the Host header's default port (a proxy in front may end TLS).
    return new URL(`${from.protocol}//${host}`).host === from.host;
  } catch {
    return false;
  }
}

/**
 * Headers every response to an allowed origin carries, set before any check answers, so a 401,
 * 413 or 503 reaches the page's script too (a browser hides a response without them).
 */
export function setCorsHeaders(res: ServerResponse, origin: string): void {
  res.setHeader("Access-Control-Allow-Origin", origin);
  res.setHeader("Access-Control-Expose-Headers", CORS_EXPOSE_HEADERS);
  res.setHeader("Vary", "Origin");
}

/** True for a CORS preflight: OPTIONS naming the method the page wants to send. */
export function isPreflight(req: IncomingMessage): boolean {
  return req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined;
}

/** The 204 answer to an allowed origin's preflight (no token needed: browsers send none). */
export function answerPreflight(res: ServerResponse, origin: string): void {
  setCorsHeaders(res, origin);
  res.writeHead(204, {
    "Access-Control-Allow-Methods": CORS_ALLOW_METHODS,
    "Access-Control-Allow-Headers": CORS_ALLOW_HEADERS,
    "Access-Control-Max-Age": String(CORS_MAX_AGE_SECONDS),
    "Content-Length": "0",
  });
  res.end();
}
