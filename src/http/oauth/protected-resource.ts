import { getOAuthProtectedResourceMetadataUrl } from "@modelcontextprotocol/server";

/**
 * RFC 9728 Protected Resource Metadata: how a client that met a 401 finds the authorization
 * server to log in with, and the scopes to ask for. Served at the root well-known path and at the
 * path-aware one of the MCP endpoint (`/.well-known/oauth-protected-resource/mcp`), where clients
 * following the MCP authorization spec look first.
 */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported: string[];
  bearer_methods_supported: string[];
  resource_name: string;
}

export const METADATA_ROOT = "/.well-known/oauth-protected-resource";

export function protectedResourceMetadata(
  resource: string,
  issuer: string,
  /** As clients must ask for them (see OAuthSettings.scopePrefix). */
  scopes: readonly string[],
): ProtectedResourceMetadata {
  return {
    resource,
    authorization_servers: [issuer],
    scopes_supported: [...scopes],
    // Tokens in the Authorization header only: never in a query string, where logs keep them.
    bearer_methods_supported: ["header"],
    resource_name: "crm-insights-mcp",
  };
}

/** The metadata URL a challenge names: the path-aware form for the resource's own path. */
export function metadataUrl(resource: string): string {
  return getOAuthProtectedResourceMetadataUrl(new URL(resource));
}

/**
 * The request paths that answer with the metadata: the root form, the form for `/mcp`, and the
 * form for the public URL's path when a proxy serves the endpoint elsewhere (`/crm/mcp`).
 */
export function metadataPaths(resource: string): Set<string> {
  const publicPath = new URL(metadataUrl(resource)).pathname;
  return new Set([METADATA_ROOT, `${METADATA_ROOT}/mcp`, publicPath]);
}
