import type { JWTHeaderParameters, JWTPayload } from "jose";
import { clipValue } from "../../clip.js";
import { printable } from "../../printable.js";
import type { VerifierOptions } from "./access-token-verifier.js";

/**
 * What a verified signature cannot say about an access token: that it is one (and not an ID
 * token of the same issuer), that it was not issued in the future, that it names its caller,
 * and which scopes it grants.
 */

/** Clocks of the issuer and this server may differ by this much. */
export const CLOCK_LEEWAY_SECONDS = 30;

/**
 * Scopes from `scope` (RFC 9068 and RFC 8693: space-separated) and `scp` (Okta: an array; Entra
 * ID: space-separated); `roles` (Entra ID's application permissions) only in a token with
 * neither, an app acting for itself. In a delegated token `roles` are the user's app roles, and
 * counting them would give the client more than the user consented to let it do.
 */
export function scopesOf(payload: JWTPayload): string[] {
  const delegated = payload.scope !== undefined || payload.scp !== undefined;
  const found: string[] = [];
  for (const claim of delegated ? [payload.scope, payload.scp] : [payload.roles]) {
    if (typeof claim === "string") found.push(...claim.split(" "));
    else if (Array.isArray(claim)) found.push(...claim.filter((s) => typeof s === "string"));
  }
  return [...new Set(found.filter((s) => s !== ""))];
}

/** `typ` header values of access tokens, compared as media types (RFC 7515 section 4.1.9). */
const ACCESS_TOKEN_TYPES = new Set(["at+jwt", "jwt"]);
/** Claims only ID tokens carry (OpenID Connect Core 2 and 3.3.2.11; Keycloak's own `typ`). */
const ID_TOKEN_CLAIMS = ["nonce", "at_hash", "c_hash"] as const;

/**
 * What makes a verified token unusable here, or undefined. An ID token of the same issuer may
 * name this server's audience (Entra ID gives a v2 token the application ID as `aud`, and a
 * client registered as that application gets ID tokens for it): RFC 9068 section 4 tells it
 * apart by `typ`, which Entra ID and Keycloak set to `JWT` on both kinds, so the claims only ID
 * tokens carry are checked too. `auth_time` is not one: RFC 9068 section 2.2.1 allows it in
 * access tokens, and Okta's and Keycloak's carry it.
 */
export function unusableBecause(
  header: JWTHeaderParameters,
  payload: JWTPayload,
  options: Pick<VerifierOptions, "requireAtJwt" | "callerClaim">,
  nowMs: number,
): string | undefined {
  const typ = header.typ === undefined ? undefined : mediaType(String(header.typ));
  const shown = header.typ === undefined ? "absent" : printable(clipValue(String(header.typ), 40));
  if (options.requireAtJwt === true && typ !== "at+jwt") {
    return `The token is not an RFC 9068 access token (its typ header is ${shown}): this server takes only at+jwt (CRM_OAUTH_REQUIRE_AT_JWT).`;
  }
  if (typ !== undefined && !ACCESS_TOKEN_TYPES.has(typ)) {
    return `The token's typ header ${shown} is not an access token's (at+jwt or JWT).`;
  }
  const markers: string[] = ID_TOKEN_CLAIMS.filter((claim) => payload[claim] !== undefined);
  if (payload.typ === "ID") markers.push('typ "ID"');
  if (markers.length > 0) {
    return `The token is an ID token (it carries ${markers.join(", ")}), not an access token: send the access token the authorization server issued.`;
  }
  if (typeof payload.iat === "number" && payload.iat > nowMs / 1000 + CLOCK_LEEWAY_SECONDS) {
    return `The token's iat (issued at) is in the future, beyond the ${CLOCK_LEEWAY_SECONDS} s this server allows between clocks: check the clocks of the authorization server and this server.`;
  }
  if (typeof payload.sub !== "string" || payload.sub.trim() === "") {
    return "The token's sub claim must be a non-empty string.";
  }
  const claim = options.callerClaim;
  if (claim !== undefined && claim !== "sub" && payload[claim] !== undefined) {
    const value = payload[claim];
    if (typeof value !== "string" || value.trim() === "") {
      return `The token's ${claim} claim, which names the caller (CRM_OAUTH_CALLER_CLAIM), must be a non-empty string.`;
    }
  }
  return undefined;
}

/** `application/at+jwt` and `AT+JWT` are `at+jwt`. */
function mediaType(value: string): string {
  const lower = value.toLowerCase();
  return lower.startsWith("application/") ? lower.slice("application/".length) : lower;
}
