import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWK } from "jose";
import Provider, {
  type Adapter,
  type AdapterPayload,
  type Configuration,
  type KoaContextWithOIDC,
} from "oidc-provider";

/**
 * A real OpenID Provider (oidc-provider, OpenID certified) on a loopback port, for the OAuth
 * resource-server tests. It issues RS256 JWT access tokens for the resource named by an RFC 8707
 * resource indicator, by client credentials or by the authorization code flow with PKCE; its
 * login and consent are answered without a person (the user is `nextUser`, consenting to the
 * scopes `userScopes` allows them). `rotateKeys` replaces the signing key as a provider does when
 * it rotates: the new key signs, the old one stays published until `retireOldKeys`.
 */
export interface TestProvider {
  issuer: string;
  /** The current signing key (private), to sign test-made tokens as the provider would. */
  signingKey(): JWK;
  /** An access token by client credentials (confidential client `clientId`). */
  clientCredentials(clientId: string, resource: string, scope: string): Promise<string>;
  /** Who logs in at the next authorization request. */
  nextUser: string;
  /** What each user may be granted at consent (the provider's policy). */
  userScopes: Record<string, string[]>;
  /** The public client for the authorization code flow (no secret, PKCE). */
  readonly publicClient: { clientId: string; redirectUri: string };
  rotateKeys(): Promise<void>;
  /** Publishes only the newest key. */
  retireOldKeys(): Promise<void>;
  /** JWKS requests served so far. */
  jwksRequests(): number;
  close(): Promise<void>;
}

export const CONFIDENTIAL_CLIENTS: Record<string, string> = {
  reader: "crm.read",
  exporter: "crm.read crm.export",
  analyst: "crm.read crm.query",
  admin: "crm.read crm.export crm.query",
  "no-read": "crm.export",
};
export const CLIENT_SECRET = "test-client-secret-0123456789abcdef";
const REDIRECT_URI = "http://127.0.0.1/callback";

export async function startTestProvider(): Promise<TestProvider> {
  let keys: JWK[] = [await newSigningKey()];
  let jwksRequests = 0;
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const state = {
    nextUser: "alice",
    userScopes: {} as Record<string, string[]>,
  };
  const adapter = memoryAdapter();
  const build = () => buildProvider(issuer, keys, adapter);
  let provider = build();
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    if (path === "/jwks") jwksRequests += 1;
    if (path.startsWith("/interaction/")) {
      answerInteraction(provider, req, res, state).catch((error: unknown) => {
        res.statusCode = 500;
        res.end(String(error));
      });
      return;
    }
    provider.callback()(req, res);
  });

  return {
    issuer,
    signingKey: () => keys[0] as JWK,
    get nextUser() {
      return state.nextUser;
    },
    set nextUser(user: string) {
      state.nextUser = user;
    },
    get userScopes() {
      return state.userScopes;
    },
    set userScopes(scopes: Record<string, string[]>) {
      state.userScopes = scopes;
    },
    publicClient: { clientId: "mcp-public-client", redirectUri: REDIRECT_URI },
    async clientCredentials(clientId, resource, scope) {
      const response = await fetch(`${issuer}/token`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: `Basic ${Buffer.from(`${clientId}:${CLIENT_SECRET}`).toString("base64")}`,
        },
        body: new URLSearchParams({ grant_type: "client_credentials", resource, scope }),
      });
      const body = (await response.json()) as { access_token?: string; error?: string };
      if (body.access_token === undefined) {
        throw new Error(`client credentials refused: ${JSON.stringify(body)}`);
      }
      return body.access_token;
    },
    async rotateKeys() {
      keys = [await newSigningKey(), ...keys];
      provider = build();
    },
    async retireOldKeys() {
      keys = keys.slice(0, 1);
      provider = build();
    },
    jwksRequests: () => jwksRequests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function newSigningKey(): Promise<JWK> {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const jwk = await exportJWK(privateKey);
  return {
    ...jwk,
    kid: `key-${Math.random().toString(36).slice(2, 10)}`,
    alg: "RS256",
    use: "sig",
  };
}

interface PolicyState {
  nextUser: string;
  userScopes: Record<string, string[]>;
}

/**
 * The provider's state (interactions, codes, grants) in memory, for this provider only: the
 * provider's own quick-start store says so on stderr in every test run.
 */
function memoryAdapter(): (name: string) => Adapter {
  const store = new Map<string, AdapterPayload>();
  return (name) => {
    const key = (id: string) => `${name}:${id}`;
    return {
      async upsert(id, payload) {
        store.set(key(id), payload);
      },
      async find(id) {
        return store.get(key(id));
      },
      async findByUserCode() {
        return undefined;
      },
      async findByUid(uid) {
        return [...store.entries()].find(
          ([k, p]) => k.startsWith(`${name}:`) && p.uid === uid,
        )?.[1];
      },
      async consume(id) {
        const payload = store.get(key(id));
        if (payload !== undefined) payload.consumed = Math.floor(Date.now() / 1000);
      },
      async destroy(id) {
        store.delete(key(id));
      },
      async revokeByGrantId(grantId) {
        for (const [k, p] of store) if (p.grantId === grantId) store.delete(k);
      },
    };
  };
}

function buildProvider(issuer: string, keys: JWK[], adapter: (name: string) => Adapter): Provider {
  const configuration: Configuration = {
    adapter,
    ttl: {
      ClientCredentials: 300,
      AccessToken: 300,
      IdToken: 300,
      Grant: 600,
      Interaction: 600,
      Session: 600,
      RefreshToken: 600,
    },
    clients: [
      ...Object.keys(CONFIDENTIAL_CLIENTS).map((clientId) => ({
        client_id: clientId,
        client_secret: CLIENT_SECRET,
        grant_types: ["client_credentials"],
        response_types: [],
        redirect_uris: [],
      })),
      {
        client_id: "mcp-public-client",
        application_type: "native" as const,
        token_endpoint_auth_method: "none" as const,
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        redirect_uris: [REDIRECT_URI],
      },
    ],
    jwks: { keys } as Configuration["jwks"],
    cookies: { keys: ["test-cookie-signing-key-0123456789"] },
    scopes: ["openid", "offline_access", "crm.read", "crm.export", "crm.query"],
    routes: { jwks: "/jwks" },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        // The provider's policy: a confidential client gets only its own scopes of what it asks
        // for (the others are left out, not refused); users are limited at consent.
        getResourceServerInfo: (
          _ctx: KoaContextWithOIDC,
          resourceIndicator: string,
          client: { clientId: string },
        ) => ({
          scope: CONFIDENTIAL_CLIENTS[client.clientId] ?? "crm.read crm.export crm.query",
          audience: resourceIndicator,
          accessTokenTTL: 300,
          accessTokenFormat: "jwt" as const,
          jwt: { sign: { alg: "RS256" as const } },
        }),
      },
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx, accountId) => ({ accountId, claims: () => ({ sub: accountId }) }),
  };
  return new Provider(issuer, configuration);
}

/** Login and consent, as a person would answer them: `nextUser` logs in and consents. */
async function answerInteraction(
  provider: Provider,
  req: IncomingMessage,
  res: ServerResponse,
  state: PolicyState,
): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  if (details.prompt.name === "login") {
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId: state.nextUser } },
      { mergeWithLastSubmission: false },
    );
    return;
  }
  const accountId = details.session?.accountId ?? state.nextUser;
  const grant = new provider.Grant({ accountId, clientId: String(details.params.client_id) });
  const promptDetails = details.prompt.details as {
    missingOIDCScope?: string[];
    missingResourceScopes?: Record<string, string[]>;
  };
  if (promptDetails.missingOIDCScope !== undefined) {
    grant.addOIDCScope(promptDetails.missingOIDCScope.join(" "));
  }
  // What the user may not have is refused at consent, as a provider's policy would.
  const allowed = state.userScopes[accountId];
  for (const [resource, scopes] of Object.entries(promptDetails.missingResourceScopes ?? {})) {
    const granted = allowed === undefined ? scopes : scopes.filter((s) => allowed.includes(s));
    const refused = scopes.filter((s) => !granted.includes(s));
    if (granted.length > 0) grant.addResourceScope(resource, granted.join(" "));
    if (refused.length > 0) grant.rejectResourceScope(resource, refused.join(" "));
  }
  const grantId = await grant.save();
  await provider.interactionFinished(
    req,
    res,
    { consent: { grantId } },
    { mergeWithLastSubmission: true },
  );
}

/**
 * What a browser does between the authorization request and the redirect back to the client:
 * follows the provider's redirects with its cookies, and returns the redirect to `redirectUri`
 * (carrying `code` and `state`).
 */
export async function followAuthorization(start: URL, redirectUri: string): Promise<URL> {
  const jar = new Map<string, string>();
  let url = start;
  for (let hop = 0; hop < 20; hop++) {
    const response = await fetch(url, {
      redirect: "manual",
      headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; ") },
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(";");
      const eq = pair?.indexOf("=") ?? -1;
      if (pair !== undefined && eq > 0) jar.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    const location = response.headers.get("location");
    await response.body?.cancel();
    if (location === null) {
      throw new Error(`authorization stopped at ${url.pathname} with HTTP ${response.status}`);
    }
    const next = new URL(location, url);
    if (next.href.startsWith(redirectUri)) return next;
    url = next;
  }
  throw new Error("authorization did not come back to the client within 20 redirects");
}
