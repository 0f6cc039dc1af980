import { isLoopbackHost } from "../../loopback-host.js";

/**
 * The authorization server's metadata, found from its issuer identifier the way MCP clients find
 * it: RFC 8414 first, then OpenID Connect Discovery (path inserted, then appended), so Okta,
 * Entra ID, Keycloak, Auth0 and any certified OpenID Provider are found without more settings.
 */
export interface IssuerMetadata {
  issuer: string;
  /** Where the signing keys are published (JWKS). */
  jwks_uri: string;
}

export class DiscoveryError extends Error {
  override name = "DiscoveryError";
}

/** The metadata URLs to try for `issuer`, in order (the MCP authorization spec's order). */
export function discoveryUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/+$/, "");
  if (path === "") {
    return [
      `${url.origin}/.well-known/oauth-authorization-server`,
      `${url.origin}/.well-known/openid-configuration`,
    ];
  }
  return [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${url.origin}/.well-known/openid-configuration${path}`,
    `${url.origin}${path}/.well-known/openid-configuration`,
  ];
}

export interface DiscoveryOptions {
  fetch?: typeof fetch;
  /** Per metadata URL tried. */
  timeoutMs?: number;
}

/**
 * The first metadata document that answers for `issuer` and states exactly that issuer (RFC 8414
 * section 3.3: a document for another issuer must not be used), with a usable `jwks_uri`.
 */
export async function discoverIssuer(
  issuer: string,
  options: DiscoveryOptions = {},
): Promise<IssuerMetadata> {
  const get = options.fetch ?? fetch;
  const tried: string[] = [];
  for (const url of discoveryUrls(issuer)) {
    let body: unknown;
    try {
      const response = await get(url, {
        headers: { accept: "application/json" },
        signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
      });
      if (!response.ok) {
        await response.body?.cancel();
        tried.push(`${url}: HTTP ${response.status}`);
        continue;
      }
      body = await response.json();
    } catch (error) {
      tried.push(`${url}: ${error instanceof Error ? error.message : String(error)}`);
      continue;
    }
    const document = (typeof body === "object" && body !== null ? body : {}) as Record<
      string,
      unknown
    >;
    if (document.issuer !== issuer) {
      tried.push(
        `${url}: states issuer ${JSON.stringify(document.issuer)}, not ${JSON.stringify(issuer)} (CRM_OAUTH_ISSUER must be that exact text, trailing slash included)`,
      );
      continue;
    }
    const jwks = document.jwks_uri;
    if (typeof jwks !== "string" || !usableJwksUri(jwks)) {
      tried.push(`${url}: no https jwks_uri (the issuer publishes no signing keys there)`);
      continue;
    }
    return { issuer, jwks_uri: jwks };
  }
  throw new DiscoveryError(
    `Cannot read the authorization server's metadata for ${issuer}: ${tried.join("; ")}`,
  );
}

function usableJwksUri(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "https:" || (url.protocol === "http:" && isLoopbackHost(url.hostname));
  } catch {
    return false;
  }
}
