import { createHmac, createPublicKey } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Client,
  ClientCredentialsProvider,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import { decodeJwt, generateKeyPair, importJWK, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { loadHttpSettings } from "../../src/http/http-config.js";
import { type RunningHttpServer, startHttpServer } from "../../src/http/http-server.js";
import type { ToolRuntime } from "../../src/mcp/tool.js";
import { createRuntime } from "../../src/runtime.js";
import { startSandbox } from "../../src/sandbox/index.js";
import type { RunningSandbox } from "../../src/sandbox/types.js";
import { must } from "../helpers/must.js";
import {
  CLIENT_SECRET,
  followAuthorization,
  startTestProvider,
  type TestProvider,
} from "../helpers/openid-provider.js";
import { SANDBOX_NOW, sandboxClock, toResult } from "../helpers/tool-harness.js";

/**
 * `serve --http` as an OAuth 2.1 resource server in front of a real OpenID Provider on loopback:
 * tokens come from the provider by client credentials (RFC 8707 resource indicator) and by the
 * authorization code flow with PKCE, driven by the SDK's client as an MCP host drives it.
 */
const OPS_TOKEN = "ops-static-token-0123456789abcdef";
const READ_TOOLS = ["campaign_metrics", "check_export", "recommend_products", "summarize_export"];
const ALL_TOOLS = [...READ_TOOLS, "query_export", "start_export"].sort();

let provider: TestProvider;
let sandbox: RunningSandbox;
let dataDir: string;
let server: RunningHttpServer;
let runtime: ToolRuntime;
/** The server's clock runs this far ahead of the provider's (the expired-token case moves it). */
let clockOffsetMs = 0;

beforeAll(async () => {
  provider = await startTestProvider();
  sandbox = await startSandbox({ now: SANDBOX_NOW, jobSeconds: 1 });
  dataDir = await mkdtemp(join(tmpdir(), "crm-oauth-"));
  const config = loadConfig({
    CRM_BASE_URL: sandbox.base_url,
    CRM_APPLICATION_ID: sandbox.application_id,
    CRM_SECRET_KEY: sandbox.secret_key,
    CRM_RECOMMEND_SECRET_KEY: sandbox.recommend_secret_key,
    CRM_DATA_DIR: dataDir,
    CRM_POLL_INTERVAL_SECONDS: "0.2",
  });
  const settings = loadHttpSettings(["--http", "--port", "0"], {
    CRM_OAUTH_ISSUER: provider.issuer,
    CRM_HTTP_TOKENS: `ops:${OPS_TOKEN}:crm.read`,
  });
  runtime = createRuntime(config, { now: sandboxClock().now });
  server = await startHttpServer({
    config,
    // A rotated key is fetched at once here; in service an unknown key id waits out a cooldown.
    settings: { ...settings, oauth: settings.oauth && { ...settings.oauth, jwksCooldownMs: 0 } },
    runtime,
    version: "test",
    clock: () => Date.now() + clockOffsetMs,
  });
});

afterAll(async () => {
  await server?.close(1000);
  await sandbox?.close();
  await provider?.close();
  await rm(dataDir, { recursive: true, force: true });
});

const origin = () => new URL(server.url).origin;
const metadataUrl = () => `${origin()}/.well-known/oauth-protected-resource/mcp`;

function rpc(method: string, params: Record<string, unknown> = {}, id = 1) {
  return { jsonrpc: "2.0", id, method, params };
}

const initialize = () =>
  rpc("initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "raw", version: "1" },
  });

async function post(body: unknown, token?: string): Promise<Response> {
  return fetch(server.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify(body),
  });
}

async function connectWith(token: string): Promise<Client> {
  const client = new Client({ name: "oauth-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

async function toolNames(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((t) => t.name).sort();
}

describe("Protected Resource Metadata", () => {
  it("names the issuer and the scopes at both well-known paths, without a token", async () => {
    for (const path of [
      "/.well-known/oauth-protected-resource",
      "/.well-known/oauth-protected-resource/mcp",
    ]) {
      const response = await fetch(`${origin()}${path}`);
      expect(response.status).toBe(200);
      expect(response.headers.get("access-control-allow-origin")).toBe("*");
      expect(await response.json()).toEqual({
        resource: server.url,
        authorization_servers: [provider.issuer],
        scopes_supported: ["crm.read", "crm.export", "crm.query"],
        bearer_methods_supported: ["header"],
        resource_name: "crm-insights-mcp",
      });
    }
    expect((await fetch(`${origin()}/.well-known/oauth-protected-resource/other`)).status).toBe(
      404,
    );
  });

  it("challenges a request without a token with the metadata URL and the scopes, no error code", async () => {
    const response = await post(initialize());
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe(
      `Bearer resource_metadata="${metadataUrl()}", scope="crm.read crm.export crm.query"`,
    );
  });
});

describe("access tokens from the provider", () => {
  it("lets a token with every scope list and call every tool", async () => {
    const token = await provider.clientCredentials(
      "admin",
      server.url,
      "crm.read crm.export crm.query",
    );
    const client = await connectWith(token);
    try {
      expect(await toolNames(client)).toEqual(ALL_TOOLS);
      const metrics = toResult(
        await client.callTool({
          name: "campaign_metrics",
          arguments: { task_from: "2026-11-01", task_to: "2026-11-20" },
        }),
      );
      expect(metrics.isError).toBeFalsy();
      const query = toResult(
        await client.callTool({ name: "query_export", arguments: { files: [] } }),
      );
      // Without sql the tool describes its tables: it ran, whatever the files.
      expect(query.text).not.toMatch(/insufficient|forbidden/i);
      // The caller's own token pasted into an argument: the audit trail must not keep it.
      await client.callTool({
        name: "query_export",
        arguments: { files: [], sql: `SELECT '${token}' AS pasted` },
      });
    } finally {
      await client.close();
    }
  });

  it("refuses seven kinds of bad token with 401 invalid_token and the challenge", async () => {
    const good = await provider.clientCredentials("admin", server.url, "crm.read crm.export");
    const claims = decodeJwt(good);
    const iat = claims.iat as number;
    const key = provider.signingKey();
    const providerKey = await importJWK(key, "RS256");
    const sign = (payload: Record<string, unknown>, kid: string, signingKey = providerKey) =>
      new SignJWT({ scope: "crm.read crm.export crm.query", ...payload })
        .setProtectedHeader({ alg: "RS256", kid })
        .setIssuedAt(iat)
        .setExpirationTime(iat + 300)
        .sign(signingKey);
    const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const [header, , signature] = good.split(".") as [string, string, string];
    const publicPem = createPublicKey({ key: { kty: "RSA", n: key.n, e: key.e }, format: "jwk" })
      .export({ type: "spki", format: "pem" })
      .toString();
    const hsInput = `${b64({ alg: "HS256", kid: key.kid })}.${b64(claims)}`;
    const { privateKey: strangerKey } = await generateKeyPair("RS256");

    const bad: Record<string, () => Promise<string>> = {
      "wrong audience": () =>
        provider.clientCredentials("admin", "https://elsewhere.example/mcp", "crm.read"),
      "wrong issuer": () =>
        sign({ sub: "mallory", iss: "https://evil.example", aud: server.url }, key.kid as string),
      expired: async () => good,
      "bad signature": async () =>
        `${header}.${b64({ ...claims, scope: "crm.read crm.export crm.query" })}.${signature}`,
      "unknown kid": () =>
        sign(
          { sub: "mallory", iss: provider.issuer, aud: server.url },
          "kid-nobody-publishes",
          strangerKey,
        ),
      "alg none": async () => `${b64({ alg: "none" })}.${b64(claims)}.`,
      "HS256 with the public key": async () =>
        `${hsInput}.${createHmac("sha256", publicPem).update(hsInput).digest("base64url")}`,
    };
    for (const [name, make] of Object.entries(bad)) {
      const token = await make();
      clockOffsetMs = name === "expired" ? (iat + 300 + 31) * 1000 - Date.now() : 0;
      try {
        const response = await post(initialize(), token);
        expect(response.status, name).toBe(401);
        const challenge = must(response.headers.get("www-authenticate"), "WWW-Authenticate");
        expect(challenge, name).toMatch(
          new RegExp(
            `^Bearer resource_metadata="${metadataUrl()}", scope="crm.read crm.export crm.query", error="invalid_token", error_description="[^"]+"$`,
          ),
        );
        expect(await response.text(), name).not.toContain(token);
      } finally {
        clockOffsetMs = 0;
      }
    }
    // The same good token passes on the server's own clock: only the bad parts were refused.
    expect((await post(initialize(), good)).status).toBe(200);
  });

  it("shows a caller only the tools its scopes allow and refuses the others with 403 insufficient_scope", async () => {
    const token = await provider.clientCredentials("reader", server.url, "crm.read");
    const client = await connectWith(token);
    try {
      expect(await toolNames(client)).toEqual(READ_TOOLS);
      expect((await client.listPrompts()).prompts.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
    const call = rpc("tools/call", {
      name: "start_export",
      arguments: { type: "scenario_daily_metrics" },
    });
    const refused = await post(call, token);
    expect(refused.status).toBe(403);
    expect(refused.headers.get("www-authenticate")).toBe(
      `Bearer resource_metadata="${metadataUrl()}", scope="crm.export", error="insufficient_scope", error_description="This request needs the crm.export scope."`,
    );
    // A batch with one such request is refused whole, before any of it runs.
    const before = await runtime.ledger.count();
    const batch = await post(
      [rpc("tools/call", { name: "check_export" }, 1), { ...call, id: 2 }],
      token,
    );
    expect(batch.status).toBe(403);
    expect(await runtime.ledger.count()).toBe(before);
  });

  it("hides resources and prompts from a token without crm.read, and refuses reading them", async () => {
    const token = await provider.clientCredentials("no-read", server.url, "crm.export");
    const client = await connectWith(token);
    try {
      expect(await toolNames(client)).toEqual(["start_export"]);
      expect((await client.listResources()).resources).toEqual([]);
      expect((await client.listPrompts()).prompts).toEqual([]);
    } finally {
      await client.close();
    }
    const read = await post(rpc("resources/read", { uri: "ui://anything" }), token);
    expect(read.status).toBe(403);
    expect(read.headers.get("www-authenticate")).toContain('scope="crm.read"');
  });

  it("accepts tokens signed with the provider's new key after a rotation, without a restart", async () => {
    const before = await provider.clientCredentials("reader", server.url, "crm.read");
    expect((await post(initialize(), before)).status).toBe(200);
    const oldKid = provider.signingKey().kid;
    await provider.rotateKeys();
    await provider.retireOldKeys();
    expect(provider.signingKey().kid).not.toBe(oldKid);
    const after = await provider.clientCredentials("reader", server.url, "crm.read");
    expect((await post(initialize(), after)).status).toBe(200);
    // The old key is no longer published: a token it signed is refused now.
    expect((await post(initialize(), before)).status).toBe(401);
  });

  it("keeps static tokens working beside OAuth, with their own scopes", async () => {
    const client = await connectWith(OPS_TOKEN);
    try {
      expect(await toolNames(client)).toEqual(READ_TOOLS);
    } finally {
      await client.close();
    }
    const refused = await post(rpc("tools/call", { name: "query_export" }), OPS_TOKEN);
    expect(refused.status).toBe(403);
    expect(refused.headers.get("www-authenticate")).toContain('scope="crm.query"');
  });
});

describe("the SDK's client logs in by itself from the metadata", () => {
  it("client credentials: finds the authorization server, gets a token for this resource, calls", async () => {
    const client = new Client({ name: "cc-client", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), {
        authProvider: new ClientCredentialsProvider({
          clientId: "analyst",
          clientSecret: CLIENT_SECRET,
          expectedIssuer: provider.issuer,
        }),
      }),
    );
    try {
      expect(await toolNames(client)).toEqual([...READ_TOOLS, "query_export"].sort());
    } finally {
      await client.close();
    }
  });

  it("authorization code with PKCE: the user logs in and the token names them as the job's creator", async () => {
    provider.nextUser = "alice";
    provider.userScopes = { alice: ["crm.read", "crm.export"] };
    const login = new HeadlessLogin(provider);
    const transport = () =>
      new StreamableHTTPClientTransport(new URL(server.url), { authProvider: login });
    const first = transport();
    await expect(new Client({ name: "pkce", version: "1" }).connect(first)).rejects.toThrow(
      UnauthorizedError,
    );
    // The client found the provider from this server's metadata, for this server as resource.
    expect(login.discovery?.authorizationServerUrl).toBe(provider.issuer);
    expect(login.discovery?.resourceMetadata?.resource).toBe(server.url);
    // The browser step: the provider sent the user agent back to the client with a code.
    const callback = login.callback as URL;
    expect(callback.searchParams.get("code")).toBeTruthy();
    await first.finishAuth(callback.searchParams);
    // The provider's policy left crm.query out of what alice consented to.
    expect(login.stored?.scope?.split(" ").sort()).toEqual(["crm.export", "crm.read"]);

    const client = new Client({ name: "pkce", version: "1" });
    await client.connect(transport());
    try {
      expect(await toolNames(client)).toEqual([...READ_TOOLS, "start_export"].sort());
      const started = toResult(
        await client.callTool({
          name: "start_export",
          arguments: {
            type: "scenario_daily_metrics",
            scenario_id: sandbox.world.scenarios[0]?._id,
            from: "2026-11-10",
            to: "2026-11-15",
            wait_seconds: 0,
          },
        }),
      );
      expect(started.isError).toBeFalsy();
      const jobId = (started.structured.job as { _id: string })._id;
      expect((await runtime.ledger.get(jobId))?.created_by).toBe("oauth:alice");
    } finally {
      await client.close();
    }
  });
});

/**
 * An MCP host's OAuth client for the public client of the provider: PKCE, and the browser step
 * done by following the provider's redirects (the provider logs `nextUser` in and consents).
 */
class HeadlessLogin implements OAuthClientProvider {
  stored: { access_token: string; token_type: string; scope?: string } | undefined;
  callback: URL | undefined;
  discovery: OAuthDiscoveryState | undefined;
  private verifier = "";

  constructor(private readonly provider: TestProvider) {}

  get redirectUrl(): string {
    return this.provider.publicClient.redirectUri;
  }

  get clientMetadata() {
    return {
      client_name: "headless MCP host",
      redirect_uris: [this.provider.publicClient.redirectUri],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }

  clientInformation() {
    return { client_id: this.provider.publicClient.clientId };
  }

  tokens() {
    return this.stored;
  }

  saveTokens(tokens: { access_token: string; token_type: string; scope?: string }) {
    this.stored = tokens;
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    this.callback = await followAuthorization(url, this.provider.publicClient.redirectUri);
  }

  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }

  discoveryState() {
    return this.discovery;
  }

  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }

  codeVerifier() {
    return this.verifier;
  }
}

describe("the audit trail of the calls above", () => {
  it("names each caller, records refused calls, and holds no token, secret or key", async () => {
    const records = await runtime.audit.list();
    const calls = records.map((r) => `${r.caller_kind} ${r.caller} ${r.tool} ${r.outcome}`);
    expect(calls).toEqual(
      expect.arrayContaining([
        "oauth oauth:admin campaign_metrics ok",
        "oauth oauth:admin query_export error",
        "oauth oauth:reader start_export denied",
        // The batch with check_export and start_export: one record of the refused request.
        "oauth oauth:reader (batch) denied",
        "token ops query_export denied",
        "oauth oauth:alice start_export ok",
      ]),
    );
    // The identity behind an OAuth name: issuer, subject and client.
    expect(records.find((r) => r.caller === "oauth:alice")).toMatchObject({
      issuer: provider.issuer,
      subject: "alice",
      client_id: provider.publicClient.clientId,
    });
    expect(records.find((r) => r.tool === "(batch)")?.arguments).toEqual({
      messages: 2,
      tool_calls: 2,
      tools: ["check_export", "start_export"],
      unknown_tools: 0,
    });
    // Listing tools is not a call; only calls are in the trail.
    expect(calls.every((c) => !c.includes("tools/list"))).toBe(true);
    const raw = await readFile(join(dataDir, "audit", "calls.jsonl"), "utf8");
    expect(raw).toContain("SELECT '[REDACTED]' AS pasted");
    // No JWT (every access token starts so), no static token, no client secret, no service key.
    expect(raw).not.toContain("eyJ");
    for (const secret of [OPS_TOKEN, CLIENT_SECRET, sandbox.secret_key]) {
      expect(raw).not.toContain(secret);
    }
  });
});
