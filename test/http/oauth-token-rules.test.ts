import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { decodeJwt, importJWK, type JWTPayload, SignJWT } from "jose";
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
  followAuthorization,
  startTestProvider,
  type TestProvider,
} from "../helpers/openid-provider.js";
import { SANDBOX_NOW, sandboxClock } from "../helpers/tool-harness.js";
import { waitUntil } from "../helpers/wait-until.js";
import { initializeRequest, postJson } from "./http-under-test.js";

/**
 * What the server takes as an access token beyond a good signature, over real HTTP against a
 * real OpenID Provider on loopback: not an ID token (a real one from the provider included), not
 * issued in the future, a subject that is a name, `roles` only in app-only tokens, and only
 * `at+jwt` when the operator asks for it. Tokens the test makes are signed with the provider's
 * own key, so only the rule under test can refuse them.
 */
const READ_TOOLS = ["campaign_metrics", "check_export", "recommend_products", "summarize_export"];
/** Entra ID's v2 tokens name the application (client) ID as audience. */
const CLIENT_AUDIENCE = "mcp-public-client";

let provider: TestProvider;
let sandbox: RunningSandbox;
const folders: string[] = [];
const servers: RunningHttpServer[] = [];
/** The default server: audience = its own URL. */
let server: RunningHttpServer;
let runtime: ToolRuntime;
/** `iat` of a token the provider just issued: the tests' tokens are dated from it. */
let issuedAt: number;

async function start(
  env: Record<string, string>,
): Promise<{ http: RunningHttpServer; runtime: ToolRuntime }> {
  const dataDir = await mkdtemp(join(tmpdir(), "crm-token-rules-"));
  folders.push(dataDir);
  const config = loadConfig({
    CRM_BASE_URL: sandbox.base_url,
    CRM_APPLICATION_ID: sandbox.application_id,
    CRM_SECRET_KEY: sandbox.secret_key,
    CRM_RECOMMEND_SECRET_KEY: sandbox.recommend_secret_key,
    CRM_DATA_DIR: dataDir,
  });
  const settings = loadHttpSettings(["--http", "--port", "0"], {
    CRM_OAUTH_ISSUER: provider.issuer,
    ...env,
  });
  const serverRuntime = createRuntime(config, { now: sandboxClock().now });
  const http = await startHttpServer({ config, settings, runtime: serverRuntime, version: "test" });
  servers.push(http);
  return { http, runtime: serverRuntime };
}

beforeAll(async () => {
  [provider, sandbox] = await Promise.all([
    startTestProvider(),
    startSandbox({ now: SANDBOX_NOW, jobSeconds: 1 }),
  ]);
  ({ http: server, runtime } = await start({}));
  issuedAt = decodeJwt(await provider.clientCredentials("reader", server.url, "crm.read"))
    .iat as number;
}, 60_000);

afterAll(async () => {
  await Promise.allSettled(servers.map((s) => s.close(1000)));
  await Promise.all([provider?.close(), sandbox?.close()]);
  await Promise.all(folders.map((f) => rm(f, { recursive: true, force: true })));
});

/** A token signed by the provider's key: `header` joins alg and kid; `claims` replace the defaults. */
async function token(
  claims: JWTPayload,
  header: Record<string, unknown> = { typ: "at+jwt" },
  audience = server.url,
): Promise<string> {
  const jwk = provider.signingKey();
  return new SignJWT({
    iss: provider.issuer,
    aud: audience,
    sub: "mallory",
    scope: "crm.read",
    iat: issuedAt,
    exp: issuedAt + 300,
    ...claims,
  })
    .setProtectedHeader({ ...header, alg: "RS256", kid: jwk.kid as string })
    .sign(await importJWK(jwk, "RS256"));
}

async function status(
  bearer: string,
  url = server.url,
): Promise<{ status: number; reason: string | undefined }> {
  const response = await postJson(url, initializeRequest(), { Authorization: `Bearer ${bearer}` });
  await response.text();
  // An accepted token gets no challenge, hence no reason.
  const challenge = response.headers.get("www-authenticate");
  const described =
    challenge === null ? undefined : /error_description="((?:[^"\\]|\\.)*)"/.exec(challenge);
  return { status: response.status, reason: described?.[1]?.replace(/\\(.)/g, "$1") };
}

async function toolNames(bearer: string): Promise<string[]> {
  const client = new Client({ name: "token-rules", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
    }),
  );
  try {
    return (await client.listTools()).tools.map((t) => t.name).sort();
  } finally {
    await client.close();
  }
}

/** An ID token from the provider's authorization code flow (PKCE, scope openid, a nonce). */
async function providerIdToken(nonce: string): Promise<string> {
  const { clientId, redirectUri } = provider.publicClient;
  const verifier = randomBytes(32).toString("base64url");
  const authorize = new URL(`${provider.issuer}/auth`);
  authorize.search = new URLSearchParams({
    client_id: clientId,
    response_type: "code",
    redirect_uri: redirectUri,
    scope: "openid",
    nonce,
    state: "state-1",
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
  }).toString();
  provider.nextUser = "alice";
  const callback = await followAuthorization(authorize, redirectUri);
  const response = await fetch(`${provider.issuer}/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code: must(callback.searchParams.get("code"), "code in the callback"),
      redirect_uri: redirectUri,
      client_id: clientId,
      code_verifier: verifier,
    }),
  });
  const body = (await response.json()) as { id_token?: string };
  if (body.id_token === undefined) throw new Error(`no ID token: ${JSON.stringify(body)}`);
  return body.id_token;
}

describe("ID tokens", () => {
  it("refuses the provider's own ID token where its audience is this server's (Entra ID's shape)", async () => {
    const { http } = await start({ CRM_OAUTH_AUDIENCE: CLIENT_AUDIENCE });
    const idToken = await providerIdToken("nonce-0123456789");
    expect(decodeJwt(idToken)).toMatchObject({ aud: CLIENT_AUDIENCE, nonce: "nonce-0123456789" });
    const refused = await status(idToken, http.url);
    expect(refused.status).toBe(401);
    expect(refused.reason).toMatch(/^The token is an ID token \(it carries nonce.*\)/);
    // An access token for the same audience passes: only being an ID token made the difference.
    const access = await token({ scp: "crm.read" }, { typ: "JWT" }, CLIENT_AUDIENCE);
    expect((await status(access, http.url)).status).toBe(200);
  });

  it("refuses JWTs shaped like ID tokens: a nonce, a hash of a code or token, Keycloak's typ ID", async () => {
    const shapes: Array<[string, JWTPayload, Record<string, unknown>]> = [
      ["typ JWT, nonce, auth_time", { nonce: "n-1", auth_time: issuedAt - 60 }, { typ: "JWT" }],
      ["at_hash", { at_hash: "x4Yz0aBcD1eFgH2iJkL3mN" }, { typ: "JWT" }],
      ["c_hash", { c_hash: "x4Yz0aBcD1eFgH2iJkL3mN" }, {}],
      ["Keycloak's typ ID", { typ: "ID" }, { typ: "JWT" }],
    ];
    for (const [name, claims, header] of shapes) {
      const answer = await status(await token(claims, header));
      expect(answer.status, name).toBe(401);
      expect(answer.reason, name).toMatch(/^The token is an ID token/);
    }
  });

  it("refuses a typ header other than an access token's, and takes at+jwt, JWT or none", async () => {
    for (const typ of ["logout+jwt", "id_token+jwt", "application/secevent+jwt", 7]) {
      const answer = await status(await token({}, { typ }));
      expect(answer.status, String(typ)).toBe(401);
      expect(answer.reason).toBe(
        `The token's typ header ${typ} is not an access token's (at+jwt or JWT).`,
      );
    }
    // Okta and Keycloak access tokens carry auth_time (RFC 9068 section 2.2.1 allows it).
    const accepted: Array<Record<string, unknown>> = [
      { typ: "at+jwt" },
      { typ: "application/at+jwt" },
      { typ: "JWT" },
      {},
    ];
    for (const header of accepted) {
      const answer = await status(await token({ auth_time: issuedAt - 60 }, header));
      expect(answer.status, JSON.stringify(header)).toBe(200);
    }
  });
});

describe("the other claims", () => {
  it("refuses a token issued in the future beyond the clock leeway", async () => {
    const tenYears = 10 * 365 * 86_400;
    const future = await status(
      await token({ iat: issuedAt + tenYears, exp: issuedAt + tenYears + 300 }),
    );
    expect(future.status).toBe(401);
    expect(future.reason).toContain("iat (issued at) is in the future");
    // An hour ahead is as bad; a few seconds ahead is a clock difference, within the leeway.
    expect(
      (await status(await token({ iat: issuedAt + 3_600, exp: issuedAt + 3_900 }))).status,
    ).toBe(401);
    expect((await status(await token({ iat: issuedAt + 5 }))).status).toBe(200);
  });

  it("refuses a numeric or empty sub with 401 invalid_token, and leaves a record of the refusal", async () => {
    const numeric = await status(await token({ sub: 12345 as unknown as string }));
    expect(numeric).toEqual({
      status: 401,
      reason: "The token's sub claim must be a non-empty string.",
    });
    expect((await status(await token({ sub: "" }))).status).toBe(401);
    expect((await status(await token({ sub: ["alice"] as unknown as string }))).status).toBe(401);

    const refusals = async () =>
      (await runtime.audit.list({ caller: "oauth:(no usable sub)" })).filter(
        (r) => r.tool === "(access token)",
      );
    await waitUntil(async () => (await refusals()).length === 3, "three refusals in the trail");
    const [first] = await refusals();
    expect(first).toMatchObject({
      caller: "oauth:(no usable sub)",
      caller_kind: "oauth",
      issuer: provider.issuer,
      subject: "12345",
      tool: "(access token)",
      arguments: { reason: "The token's sub claim must be a non-empty string." },
      outcome: "denied",
      error: "invalid_token",
    });
    expect((await refusals()).map((r) => r.subject)).toEqual(["12345", "", '["alice"]']);
  });

  it("counts roles as scopes only in a token without scp or scope (an app acting for itself)", async () => {
    // Delegated (Entra ID): the user consented to crm.read; their app roles are not the client's.
    const delegated = await token({
      scope: undefined,
      scp: "crm.read",
      roles: ["crm.export", "crm.query"],
    });
    expect(await toolNames(delegated)).toEqual(READ_TOOLS);
    const call = {
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "start_export", arguments: { type: "scenario_daily_metrics" } },
    };
    const refused = await postJson(server.url, call, { Authorization: `Bearer ${delegated}` });
    expect(refused.status).toBe(403);
    await refused.text();
    // App-only: no scp, no scope; its application permissions are its scopes.
    const appOnly = await token({ scope: undefined, roles: ["crm.read", "crm.export"] });
    expect(await toolNames(appOnly)).toEqual([...READ_TOOLS, "start_export"].sort());
  });
});

describe("CRM_OAUTH_REQUIRE_AT_JWT=1", () => {
  it("takes only tokens typed at+jwt, the provider's among them", async () => {
    const { http } = await start({ CRM_OAUTH_REQUIRE_AT_JWT: "1" });
    const issued = await provider.clientCredentials("reader", http.url, "crm.read");
    expect((await status(issued, http.url)).status).toBe(200);
    const typed = await token({}, { typ: "application/at+jwt" }, http.url);
    expect((await status(typed, http.url)).status).toBe(200);
    for (const header of [{ typ: "JWT" }, {}]) {
      const answer = await status(await token({}, header, http.url), http.url);
      expect(answer.status, JSON.stringify(header)).toBe(401);
      expect(answer.reason).toMatch(
        /^The token is not an RFC 9068 access token \(its typ header is (JWT|absent)\): this server takes only at\+jwt \(CRM_OAUTH_REQUIRE_AT_JWT\)\.$/,
      );
    }
  });
});
