import { isLoopbackHost } from "../loopback-host.js";
import { OriginConfigError, parseAllowedOrigins } from "./cors.js";
import {
  loadOAuthSettings,
  loadPublicUrl,
  OAuthConfigError,
  type OAuthSettings,
} from "./oauth/oauth-settings.js";
import { type HttpToken, parseTokens, TokenConfigError } from "./tokens.js";

/**
 * Settings of `serve --http`, from its arguments and the environment (a pure function, like
 * loadConfig; only the HTTP command reads these variables).
 */
export interface HttpSettings {
  host: string;
  port: number;
  tokens: HttpToken[];
  /** Raw token values, only to register them for redaction. */
  tokenSecrets: string[];
  /** CRM_OAUTH_ISSUER and CRM_OAUTH_AUDIENCE: the authorization server's tokens are accepted. */
  oauth: OAuthSettings | undefined;
  /** CRM_PUBLIC_URL: the URL clients use for `/mcp` (behind a proxy); else the listening one. */
  publicUrl: string | undefined;
  /** Host names the Host header may carry besides loopback names (behind a reverse proxy). */
  allowedHosts: string[];
  /** Exact origins (`https://app.example.com`) whose pages may call `/mcp` (CORS). */
  allowedOrigins: string[];
  maxBodyBytes: number;
  maxConcurrent: number;
  shutdownGraceMs: number;
}

export const DEFAULT_HTTP_PORT = 3000;
const DEFAULTS = { maxBodyBytes: 1024 * 1024, maxConcurrent: 64, shutdownSeconds: 20 };

export class HttpConfigError extends Error {
  override name = "HttpConfigError";
}

export const SERVE_USAGE =
  "crm-insights-mcp serve --http [--port N] [--host H]   (default 127.0.0.1:3000; --port 0 picks a free port)";

export function loadHttpSettings(args: readonly string[], env: NodeJS.ProcessEnv): HttpSettings {
  let http = false;
  let host = "127.0.0.1";
  let port = DEFAULT_HTTP_PORT;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const value = () => {
      const next = args[i + 1];
      if (next === undefined || next.startsWith("--")) {
        throw new HttpConfigError(`${arg} needs a value. Usage: ${SERVE_USAGE}`);
      }
      i += 1;
      return next;
    };
    if (arg === "--http") http = true;
    else if (arg === "--host") host = value();
    else if (arg === "--port") {
      const raw = value();
      port = Number(raw);
      if (!/^\d+$/.test(raw) || port > 65535) {
        throw new HttpConfigError(`--port must be 0-65535, got "${raw}". Usage: ${SERVE_USAGE}`);
      }
    } else throw new HttpConfigError(`Unknown argument "${arg}". Usage: ${SERVE_USAGE}`);
  }
  if (!http) {
    throw new HttpConfigError(
      `serve needs --http (the stdio server is the command without arguments). Usage: ${SERVE_USAGE}`,
    );
  }
  let parsed: ReturnType<typeof parseTokens>;
  try {
    parsed = parseTokens(env.CRM_HTTP_TOKENS);
  } catch (error) {
    if (error instanceof TokenConfigError) throw new HttpConfigError(error.message);
    throw error;
  }
  let allowedOrigins: string[];
  try {
    allowedOrigins = parseAllowedOrigins(env.CRM_HTTP_ALLOWED_ORIGINS);
  } catch (error) {
    if (error instanceof OriginConfigError) throw new HttpConfigError(error.message);
    throw error;
  }
  let oauth: OAuthSettings | undefined;
  let publicUrl: string | undefined;
  try {
    oauth = loadOAuthSettings(env);
    ({ publicUrl } = loadPublicUrl(env));
  } catch (error) {
    if (error instanceof OAuthConfigError) throw new HttpConfigError(error.message);
    throw error;
  }
  if (!isLoopbackHost(host) && parsed.tokens.length === 0 && oauth === undefined) {
    throw new HttpConfigError(
      `Refusing to serve on ${host} without tokens: anyone who reaches it could spend the team's export budget. Set CRM_HTTP_TOKENS (e.g. CRM_HTTP_TOKENS=alice:$(openssl rand -hex 32)) or CRM_OAUTH_ISSUER, or use --host 127.0.0.1 behind a reverse proxy.`,
    );
  }
  return {
    host,
    port,
    tokens: parsed.tokens,
    tokenSecrets: parsed.secrets,
    oauth,
    publicUrl,
    allowedHosts: list(env.CRM_HTTP_ALLOWED_HOSTS),
    allowedOrigins,
    maxBodyBytes: positive(env, "CRM_HTTP_MAX_BODY_BYTES", DEFAULTS.maxBodyBytes),
    maxConcurrent: positive(env, "CRM_HTTP_MAX_CONCURRENT", DEFAULTS.maxConcurrent),
    shutdownGraceMs: positive(env, "CRM_HTTP_SHUTDOWN_SECONDS", DEFAULTS.shutdownSeconds) * 1000,
  };
}

function list(raw: string | undefined): string[] {
  return (raw ?? "")
    .split(",")
    .map((h) => h.trim().toLowerCase())
    .filter((h) => h !== "");
}

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) {
    throw new HttpConfigError(
      `${name} must be a positive whole number, got "${raw}" (default ${fallback}).`,
    );
  }
  return value;
}
