import { createHmac, createPublicKey } from "node:crypto";
import { decodeJwt, generateKeyPair, importJWK, type JWTPayload, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AccessTokenVerifier,
  CLOCK_LEEWAY_SECONDS,
  InvalidTokenError,
  IssuerUnavailableError,
  RefusedTokenError,
  scopesOf,
} from "../../../src/http/oauth/access-token-verifier.js";
import { startTestProvider, type TestProvider } from "../../helpers/openid-provider.js";

const AUDIENCE = "https://crm-mcp.example.com/mcp";

let provider: TestProvider;

beforeAll(async () => {
  provider = await startTestProvider();
});

afterAll(async () => {
  await provider?.close();
});

/** A verifier whose clock is the token's `iat` plus `offsetS`: no test reads the wall clock. */
function verifierAt(token: string, offsetS = 0, jwksCooldownMs?: number) {
  const iat = decodeJwt(token).iat as number;
  return new AccessTokenVerifier({
    issuer: provider.issuer,
    audience: AUDIENCE,
    now: () => (iat + offsetS) * 1000,
    ...(jwksCooldownMs === undefined ? {} : { jwksCooldownMs }),
  });
}

/** Signs `payload` with the provider's current key, as the provider would. */
async function signedByProvider(payload: JWTPayload, iatFrom: string): Promise<string> {
  const jwk = provider.signingKey();
  const iat = decodeJwt(iatFrom).iat as number;
  return new SignJWT({ sub: "mallory", scope: "crm.read crm.export crm.query", ...payload })
    .setProtectedHeader({ alg: "RS256", kid: jwk.kid as string, typ: "at+jwt" })
    .setIssuedAt(iat)
    .setExpirationTime(iat + 300)
    .sign(await importJWK(jwk, "RS256"));
}

function base64url(value: object): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

describe("access tokens from a real OpenID Provider", () => {
  it("accepts the provider's token for this audience: subject, client and scopes", async () => {
    const token = await provider.clientCredentials("analyst", AUDIENCE, "crm.read crm.query");
    const verified = await verifierAt(token).verify(token);
    expect(verified).toMatchObject({
      subject: "analyst",
      clientId: "analyst",
      scopes: ["crm.read", "crm.query"],
      expiresAt: decodeJwt(token).exp,
    });
  });

  it("refuses a token issued for another resource (audience)", async () => {
    const token = await provider.clientCredentials(
      "admin",
      "https://other.example/mcp",
      "crm.read",
    );
    await expect(verifierAt(token).verify(token)).rejects.toThrow(
      new InvalidTokenError(
        `The token was not issued for this server (its audience must be ${AUDIENCE}).`,
      ),
    );
  });

  it("refuses a token of another issuer signed with the right key", async () => {
    const good = await provider.clientCredentials("reader", AUDIENCE, "crm.read");
    const token = await signedByProvider({ iss: "https://evil.example", aud: AUDIENCE }, good);
    await expect(verifierAt(good).verify(token)).rejects.toThrow(/not issued by/);
    // The same token with the right issuer passes: only the issuer made the difference.
    const control = await signedByProvider({ iss: provider.issuer, aud: AUDIENCE }, good);
    await expect(verifierAt(good).verify(control)).resolves.toMatchObject({ subject: "mallory" });
  });

  it("refuses an expired token once the leeway has passed, by the verifier's clock", async () => {
    const token = await provider.clientCredentials("reader", AUDIENCE, "crm.read");
    const lifetime = (decodeJwt(token).exp as number) - (decodeJwt(token).iat as number);
    await expect(
      verifierAt(token, lifetime + CLOCK_LEEWAY_SECONDS - 1).verify(token),
    ).resolves.toMatchObject({ subject: "reader" });
    await expect(
      verifierAt(token, lifetime + CLOCK_LEEWAY_SECONDS + 1).verify(token),
    ).rejects.toThrow("The token has expired.");
  });

  it("refuses a token used before its nbf", async () => {
    const good = await provider.clientCredentials("reader", AUDIENCE, "crm.read");
    const iat = decodeJwt(good).iat as number;
    const token = await signedByProvider(
      { iss: provider.issuer, aud: AUDIENCE, nbf: iat + 120 },
      good,
    );
    await expect(verifierAt(good).verify(token)).rejects.toThrow("The token is not valid yet.");
  });

  it("refuses a token whose signature was altered", async () => {
    const token = await provider.clientCredentials("reader", AUDIENCE, "crm.read");
    const [header, , signature] = token.split(".") as [string, string, string];
    // The payload claims more scopes than the provider granted; the signature no longer matches.
    const forged = `${header}.${base64url({ ...decodeJwt(token), scope: "crm.read crm.export" })}.${signature}`;
    await expect(verifierAt(token).verify(forged)).rejects.toThrow(
      "The token's signature does not verify.",
    );
  });

  it("refuses a token signed by a key the provider does not publish, fetching the keys again once", async () => {
    const good = await provider.clientCredentials("reader", AUDIENCE, "crm.read");
    const verifier = verifierAt(good);
    await verifier.verify(good);
    const { privateKey } = await generateKeyPair("RS256");
    const iat = decodeJwt(good).iat as number;
    const sign = (kid: string) =>
      new SignJWT({ sub: "mallory", scope: "crm.read" })
        .setProtectedHeader({ alg: "RS256", kid })
        .setIssuer(provider.issuer)
        .setAudience(AUDIENCE)
        .setIssuedAt(iat)
        .setExpirationTime(iat + 300)
        .sign(privateKey);
    const before = provider.jwksRequests();
    await expect(verifier.verify(await sign("unknown-kid-1"))).rejects.toThrow(
      "The token is signed with a key the issuer does not publish.",
    );
    // A made-up key id within the cooldown does not reach the issuer again.
    await expect(verifier.verify(await sign("unknown-kid-2"))).rejects.toThrow(InvalidTokenError);
    expect(provider.jwksRequests() - before).toBe(0);
    // With the cooldown over (none here), an unknown key id makes one fetch, then is refused.
    const eager = verifierAt(good, 0, 0);
    await eager.verify(good);
    const fetched = provider.jwksRequests();
    await expect(eager.verify(await sign("unknown-kid-3"))).rejects.toThrow(InvalidTokenError);
    expect(provider.jwksRequests() - fetched).toBe(1);
  });

  it('refuses alg "none" and a shared-secret (HS256) token made with the public key', async () => {
    const good = await provider.clientCredentials("reader", AUDIENCE, "crm.read");
    const claims = { ...decodeJwt(good), scope: "crm.read crm.export crm.query" };
    const unsigned = `${base64url({ alg: "none", typ: "JWT" })}.${base64url(claims)}.`;
    await expect(verifierAt(good).verify(unsigned)).rejects.toThrow(
      "The token's signing algorithm is not accepted (only asymmetric signatures are).",
    );
    // The classic confusion: the provider's public key (known to all) used as an HMAC secret.
    const jwk = provider.signingKey();
    const publicPem = createPublicKey({ key: { kty: "RSA", n: jwk.n, e: jwk.e }, format: "jwk" })
      .export({ type: "spki", format: "pem" })
      .toString();
    const input = `${base64url({ alg: "HS256", kid: jwk.kid })}.${base64url(claims)}`;
    const mac = createHmac("sha256", publicPem).update(input).digest("base64url");
    await expect(verifierAt(good).verify(`${input}.${mac}`)).rejects.toThrow(
      /signing algorithm is not accepted/,
    );
  });

  it("refuses what is not a JWT, and a token without a subject", async () => {
    const good = await provider.clientCredentials("reader", AUDIENCE, "crm.read");
    await expect(verifierAt(good).verify("a-static-looking-token-0123456789")).rejects.toThrow(
      /not a JWT access token/,
    );
    const anonymous = await signedByProvider(
      { iss: provider.issuer, aud: AUDIENCE, sub: undefined },
      good,
    );
    await expect(verifierAt(good).verify(anonymous)).rejects.toThrow(/sub claim/);
  });

  it("accepts tokens signed with a rotated key without a new verifier", async () => {
    const before = await provider.clientCredentials("exporter", AUDIENCE, "crm.read crm.export");
    const verifier = verifierAt(before, 0, 0);
    await verifier.verify(before);
    const oldKid = provider.signingKey().kid;
    await provider.rotateKeys();
    await provider.retireOldKeys();
    const after = await provider.clientCredentials("exporter", AUDIENCE, "crm.read crm.export");
    expect(
      JSON.parse(Buffer.from(after.split(".")[0] as string, "base64url").toString()).kid,
    ).not.toBe(oldKid);
    await expect(verifier.verify(after)).resolves.toMatchObject({ subject: "exporter" });
  });

  it("answers 'unavailable' (not 'invalid') while the issuer cannot be reached, and retries after a pause", async () => {
    let now = 0;
    let attempts = 0;
    const verifier = new AccessTokenVerifier({
      issuer: "https://login.example.com",
      audience: AUDIENCE,
      now: () => now,
      discoveryRetryMs: 5_000,
      discovery: {
        fetch: async () => {
          attempts += 1;
          throw new TypeError("fetch failed");
        },
      },
    });
    const token = await provider.clientCredentials("reader", AUDIENCE, "crm.read");
    await expect(verifier.verify(token)).rejects.toThrow(IssuerUnavailableError);
    // Both metadata URLs of an issuer without a path were tried.
    expect(attempts).toBe(2);
    now = 4_000;
    await expect(verifier.verify(token)).rejects.toThrow(/Cannot read the authorization server/);
    expect(attempts).toBe(2);
    now = 6_000;
    await expect(verifier.verify(token)).rejects.toThrow(IssuerUnavailableError);
    expect(attempts).toBe(4);
  });
});

describe("scopes in access tokens", () => {
  it("names the caller by the configured claim and strips the configured scope prefix", async () => {
    const good = await provider.clientCredentials("reader", AUDIENCE, "crm.read");
    const token = await signedByProvider(
      {
        iss: provider.issuer,
        aud: AUDIENCE,
        sub: "7f3a9c1e-user-id",
        preferred_username: "alice@example.com",
        scope: undefined,
        scp: "api://crm-app/crm.read crm.query other",
      },
      good,
    );
    const iat = decodeJwt(good).iat as number;
    const verifier = new AccessTokenVerifier({
      issuer: provider.issuer,
      audience: AUDIENCE,
      callerClaim: "preferred_username",
      scopePrefix: "api://crm-app/",
      now: () => iat * 1000,
    });
    expect(await verifier.verify(token)).toMatchObject({
      subject: "7f3a9c1e-user-id",
      caller: "alice@example.com",
      scopes: ["crm.read", "crm.query", "other"],
    });
    // A token without the claim (an app acting for itself) is named by its subject.
    expect((await verifier.verify(good)).caller).toBe("reader");
  });

  it("refuses a caller claim that is there but not a non-empty string; names by sub without it", async () => {
    const good = await provider.clientCredentials("reader", AUDIENCE, "crm.read");
    const iat = decodeJwt(good).iat as number;
    const verifier = new AccessTokenVerifier({
      issuer: provider.issuer,
      audience: AUDIENCE,
      callerClaim: "oid",
      now: () => iat * 1000,
    });
    const withOid = (oid: unknown) =>
      signedByProvider({ iss: provider.issuer, aud: AUDIENCE, sub: "pairwise-sub", oid }, good);
    expect((await verifier.verify(await withOid("2f1e-object-id"))).caller).toBe("2f1e-object-id");
    for (const oid of [42, "", "   ", ["a"], { id: "a" }, null]) {
      await expect(verifier.verify(await withOid(oid)), JSON.stringify(oid)).rejects.toThrow(
        new RefusedTokenError(
          "The token's oid claim, which names the caller (CRM_OAUTH_CALLER_CLAIM), must be a non-empty string.",
          { subject: "pairwise-sub", clientId: undefined },
        ),
      );
    }
    expect((await verifier.verify(await withOid(undefined))).caller).toBe("pairwise-sub");
  });

  it("reads scope (space-separated) and scp (Okta's array, Entra ID's string)", () => {
    expect(scopesOf({ scope: "crm.read  crm.query" })).toEqual(["crm.read", "crm.query"]);
    expect(scopesOf({ scp: ["crm.read", "crm.export", 7] })).toEqual(["crm.read", "crm.export"]);
    expect(scopesOf({ scp: "crm.read crm.export" })).toEqual(["crm.read", "crm.export"]);
    expect(scopesOf({})).toEqual([]);
  });

  it("reads roles only in a token without scp or scope: an app acting for itself", () => {
    expect(scopesOf({ roles: ["crm.export"] })).toEqual(["crm.export"]);
    // A user's token (Entra ID's delegated scp): their app roles are not what they consented to.
    expect(scopesOf({ scp: "crm.read", roles: ["crm.export", "crm.query"] })).toEqual(["crm.read"]);
    expect(scopesOf({ scope: "crm.read", roles: ["crm.export"] })).toEqual(["crm.read"]);
    expect(scopesOf({ scp: "", roles: ["crm.export"] })).toEqual([]);
  });
});
