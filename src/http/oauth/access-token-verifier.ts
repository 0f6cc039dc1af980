import {
  createRemoteJWKSet,
  errors,
  type JWTHeaderParameters,
  type JWTPayload,
  jwtVerify,
} from "jose";
import { CLOCK_LEEWAY_SECONDS, scopesOf, unusableBecause } from "./access-token-rules.js";
import { type DiscoveryOptions, discoverIssuer, type IssuerMetadata } from "./issuer-metadata.js";

/**
 * Verifies the authorization server's JWT access tokens, every cryptographic step by jose: the
 * signature against the issuer's published keys (JWKS, found by discovery, cached, fetched again
 * for a key id it does not know, at most once per cooldown), `iss`, `exp` and `nbf` with a small
 * leeway, and `aud` naming this server's audience (RFC 8707: a token issued for another resource
 * is refused; RFC 7519 section 4.1.3: a string equal to it, or an array holding it). Only
 * asymmetric algorithms: never `none`, never a shared-secret HS*, whose key a resource server
 * would have to hold.
 *
 * Then what a signature cannot say (access-token-rules.ts): that it is an access token and not
 * an ID token of the same issuer (RFC 9068 section 4), that it was not issued in the future, and
 * that its subject and caller claim are names.
 */
export const ACCEPTED_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
];

export { CLOCK_LEEWAY_SECONDS, scopesOf };

export interface VerifierOptions {
  issuer: string;
  audience: string;
  /** Stripped from a token's scopes that start with it (see OAuthSettings.scopePrefix). */
  scopePrefix?: string | undefined;
  /** The claim naming the caller (default `sub`). */
  callerClaim?: string | undefined;
  /** Only `typ: at+jwt` tokens (RFC 9068), for issuers that mark their access tokens so. */
  requireAtJwt?: boolean | undefined;
  /** The clock tokens are judged by (epoch ms). */
  now?: () => number;
  /**
   * After a JWKS fetch, how long a token with an unknown key id is refused without fetching
   * again (a flood of made-up key ids must not become a flood of requests to the issuer).
   */
  jwksCooldownMs?: number;
  /** After a failed discovery, how long requests are answered "unavailable" before retrying. */
  discoveryRetryMs?: number;
  discovery?: DiscoveryOptions;
}

export interface VerifiedAccessToken {
  /** `sub`: who the token speaks for (a user, or a client acting for itself). */
  subject: string;
  /** The caller's name: the callerClaim's value, else `sub`. */
  caller: string;
  /** The OAuth client the token was issued to, when the token says. */
  clientId: string | undefined;
  scopes: string[];
  /** `exp`, in seconds since the epoch. */
  expiresAt: number;
}

/** The token is refused; the message says why and may be shown to the client (no token in it). */
export class InvalidTokenError extends Error {
  override name = "InvalidTokenError";
}

/**
 * A token the issuer signed for this audience, refused by this server's own rules: who it names
 * is known (if not usable), so the refusal is worth a record in the audit trail.
 */
export class RefusedTokenError extends InvalidTokenError {
  override name = "RefusedTokenError";

  constructor(
    message: string,
    /** The token's `sub` as it came (any JSON value), and its client. */
    readonly claims: { subject: unknown; clientId: string | undefined },
  ) {
    super(message);
  }
}

/** The issuer's metadata or keys cannot be read now: nothing can be verified. */
export class IssuerUnavailableError extends Error {
  override name = "IssuerUnavailableError";
}

export class AccessTokenVerifier {
  private readonly now: () => number;
  private keys: Promise<Parameters<typeof jwtVerify>[1]> | undefined;
  private failedAt: number | undefined;
  private lastFailure: Error | undefined;

  constructor(private readonly options: VerifierOptions) {
    this.now = options.now ?? Date.now;
  }

  async verify(token: string): Promise<VerifiedAccessToken> {
    if (!/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token)) {
      throw new InvalidTokenError("The token is not a JWT access token of the configured issuer.");
    }
    const keys = await this.jwks();
    let payload: JWTPayload;
    let header: JWTHeaderParameters;
    try {
      ({ payload, protectedHeader: header } = await jwtVerify(token, keys, {
        issuer: this.options.issuer,
        audience: this.options.audience,
        algorithms: ACCEPTED_ALGORITHMS,
        clockTolerance: CLOCK_LEEWAY_SECONDS,
        currentDate: new Date(this.now()),
        requiredClaims: ["exp", "sub"],
      }));
    } catch (error) {
      throw refusal(error, this.options);
    }
    const clientId = stringClaim(payload, "client_id") ?? stringClaim(payload, "azp");
    const problem = unusableBecause(header, payload, this.options, this.now());
    if (problem !== undefined) {
      throw new RefusedTokenError(problem, { subject: payload.sub, clientId });
    }
    const prefix = this.options.scopePrefix;
    const subject = payload.sub as string;
    const claim = this.options.callerClaim;
    return {
      subject,
      caller: (claim === undefined ? undefined : stringClaim(payload, claim)) ?? subject,
      clientId,
      scopes: scopesOf(payload).map((s) =>
        prefix !== undefined && s.startsWith(prefix) ? s.slice(prefix.length) : s,
      ),
      expiresAt: payload.exp as number,
    };
  }

  /** The issuer's key set, discovered once; a failed discovery is retried after a pause. */
  private jwks(): Promise<Parameters<typeof jwtVerify>[1]> {
    const retryMs = this.options.discoveryRetryMs ?? 5_000;
    if (this.keys === undefined && this.failedAt !== undefined) {
      if (this.now() - this.failedAt < retryMs) {
        return Promise.reject(new IssuerUnavailableError(this.lastFailure?.message));
      }
    }
    this.keys ??= discoverIssuer(this.options.issuer, this.options.discovery).then(
      (metadata: IssuerMetadata) =>
        createRemoteJWKSet(new URL(metadata.jwks_uri), {
          cooldownDuration: this.options.jwksCooldownMs ?? 30_000,
          timeoutDuration: 10_000,
        }),
      (error: unknown) => {
        this.keys = undefined;
        this.failedAt = this.now();
        this.lastFailure = error instanceof Error ? error : new Error(String(error));
        throw new IssuerUnavailableError(this.lastFailure.message);
      },
    );
    return this.keys;
  }
}

/** What the client is told, by the check that failed. */
function refusal(error: unknown, options: VerifierOptions): Error {
  if (error instanceof errors.JWTExpired) return new InvalidTokenError("The token has expired.");
  if (error instanceof errors.JWTClaimValidationFailed) {
    switch (error.claim) {
      case "iss":
        return new InvalidTokenError(
          `The token was not issued by ${options.issuer}, the issuer this server trusts.`,
        );
      case "aud":
        return new InvalidTokenError(
          `The token was not issued for this server (its audience must be ${options.audience}).`,
        );
      case "nbf":
        return new InvalidTokenError("The token is not valid yet.");
      default:
        return new InvalidTokenError(`The token's ${error.claim} claim is missing or invalid.`);
    }
  }
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) {
    return new InvalidTokenError(
      "The token's signing algorithm is not accepted (only asymmetric signatures are).",
    );
  }
  if (
    error instanceof errors.JWKSNoMatchingKey ||
    error instanceof errors.JWKSMultipleMatchingKeys
  ) {
    return new InvalidTokenError("The token is signed with a key the issuer does not publish.");
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return new InvalidTokenError("The token's signature does not verify.");
  }
  if (
    error instanceof errors.JWSInvalid ||
    error instanceof errors.JWTInvalid ||
    error instanceof errors.JWKInvalid
  ) {
    return new InvalidTokenError("The token is not a well-formed signed JWT.");
  }
  // The key set could not be fetched or read (timeout, HTTP error, network).
  return new IssuerUnavailableError(
    `The issuer's signing keys cannot be read: ${error instanceof Error ? error.message : String(error)}`,
  );
}

function stringClaim(payload: JWTPayload, name: string): string | undefined {
  const value = payload[name];
  return typeof value === "string" && value !== "" ? value : undefined;
}
