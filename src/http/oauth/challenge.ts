/**
 * `WWW-Authenticate: Bearer ...` challenges (RFC 6750 section 3, RFC 9728 section 5.1). A request
 * without a token gets no error code (RFC 6750 says so); a refused token gets `invalid_token`; a
 * token without the scope a request needs gets `insufficient_scope` naming that scope, which a
 * client adds to what it asks the authorization server for (step-up).
 */
export interface Challenge {
  error?: "invalid_token" | "insufficient_scope";
  description?: string;
  /** The scopes to ask for. */
  scopes?: readonly string[];
  /** The RFC 9728 metadata URL (OAuth mode). */
  resourceMetadata?: string;
  /** Static tokens only: the protection space, as before OAuth. */
  realm?: string;
}

export function bearerChallenge(challenge: Challenge): string {
  const params: Array<[string, string | undefined]> = [
    ["realm", challenge.realm],
    ["resource_metadata", challenge.resourceMetadata],
    ["scope", challenge.scopes === undefined ? undefined : challenge.scopes.join(" ")],
    ["error", challenge.error],
    ["error_description", challenge.description],
  ];
  const present = params.filter((p): p is [string, string] => p[1] !== undefined && p[1] !== "");
  return `Bearer ${present.map(([name, value]) => `${name}="${quoted(value)}"`).join(", ")}`;
}

/** An RFC 7230 quoted-string body: `\` and `"` escaped, anything unprintable made a space. */
function quoted(value: string): string {
  return value.replace(/[\\"]/g, "\\$&").replace(/[^\x20-\x7e]/g, " ");
}
