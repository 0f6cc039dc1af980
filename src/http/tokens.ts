import { createHash, timingSafeEqual } from "node:crypto";
import { isScope, SCOPES, type Scope } from "../mcp/scopes.js";

/**
 * Bearer tokens of `serve --http`, from CRM_HTTP_TOKENS: comma-separated entries, each
 * `name:token` (the name is what logs, the audit trail and the ledger show as the caller),
 * `name:token:scope+scope` (only those OAuth scopes, e.g. `bob:<token>:crm.read+crm.query`) or
 * a bare `token` (named `token-<first 8 hex digits of its SHA-256>`, which identifies it without
 * revealing it). A token without scopes has them all. Several entries may share a name: that is
 * how a token is rotated (the old and the new one both work until the old one is removed).
 */
export interface HttpToken {
  name: string;
  /** SHA-256 of the token: compared in constant time, and the token itself is not kept. */
  digest: Buffer;
  /** What the token may do (every scope when the entry names none). */
  scopes: readonly Scope[];
}

export class TokenConfigError extends Error {
  override name = "TokenConfigError";
}

/** Long enough that guessing is hopeless; `openssl rand -hex 32` gives 64 characters. */
export const MIN_TOKEN_LENGTH = 16;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;
const TOKEN = /^[\x21-\x7e]+$/;

/** Parses CRM_HTTP_TOKENS; `undefined` or blank means no tokens (loopback only). */
export function parseTokens(raw: string | undefined): {
  tokens: HttpToken[];
  /** The raw token values, for the redaction list only. */
  secrets: string[];
} {
  const tokens: HttpToken[] = [];
  const secrets: string[] = [];
  if (raw === undefined || raw.trim() === "") return { tokens, secrets };
  const entries = raw.split(",").map((e) => e.trim());
  entries.forEach((entry, index) => {
    const where = `CRM_HTTP_TOKENS entry ${index + 1}`;
    if (entry === "") throw new TokenConfigError(`${where} is empty; remove the extra comma.`);
    const colon = entry.indexOf(":");
    const name = colon === -1 ? undefined : entry.slice(0, colon);
    const { token, scopes } = splitScopes(colon === -1 ? entry : entry.slice(colon + 1), where);
    if (name !== undefined && !NAME.test(name)) {
      throw new TokenConfigError(
        `${where}: the name before ":" must be 1-64 letters, digits, ".", "_", "@" or "-" (e.g. alice:<token>).`,
      );
    }
    if (!TOKEN.test(token) || token.length < MIN_TOKEN_LENGTH) {
      throw new TokenConfigError(
        `${where}: a token must be at least ${MIN_TOKEN_LENGTH} printable characters without spaces, commas or ":" before the token; make one with: openssl rand -hex 32`,
      );
    }
    const digest = sha256(token);
    tokens.push({ name: name ?? `token-${digest.toString("hex").slice(0, 8)}`, digest, scopes });
    secrets.push(token);
  });
  return { tokens, secrets };
}

/** The name of the token `presented` matches, or undefined (see findToken). */
export function matchToken(tokens: readonly HttpToken[], presented: string): string | undefined {
  return findToken(tokens, presented)?.name;
}

/**
 * The token `presented` matches, or undefined. Every configured token is compared, each in
 * constant time over equal-length digests, so neither a token's content nor its position in the
 * list shows in the timing.
 */
export function findToken(tokens: readonly HttpToken[], presented: string): HttpToken | undefined {
  const digest = sha256(presented);
  let match: HttpToken | undefined;
  for (const token of tokens) {
    if (timingSafeEqual(token.digest, digest) && match === undefined) match = token;
  }
  return match;
}

/** A list of scope-like words joined by "+": what may follow a token's last ":". */
const SCOPE_LIST = /^[a-z][a-z0-9_-]*\.[a-z0-9_.-]+(\+[a-z][a-z0-9_-]*\.[a-z0-9_.-]+)*$/i;

/**
 * `token` or `token:scope+scope`. A suffix that looks like scopes (dotted words joined by "+")
 * must name known ones; anything else after a ":" belongs to the token, as before scopes existed.
 */
function splitScopes(value: string, where: string): { token: string; scopes: readonly Scope[] } {
  if (value.endsWith(":")) {
    throw new TokenConfigError(
      `${where} ends with ":": give scopes after it (${SCOPES.join(", ")}, joined by "+") or remove it.`,
    );
  }
  const colon = value.lastIndexOf(":");
  const suffix = colon === -1 ? "" : value.slice(colon + 1);
  if (!SCOPE_LIST.test(suffix)) return { token: value, scopes: SCOPES };
  const named = [...new Set(suffix.split("+"))];
  const unknown = named.filter((s) => !isScope(s));
  if (unknown.length > 0) {
    throw new TokenConfigError(
      `${where}: unknown scope ${unknown.map((s) => `"${s}"`).join(", ")}; the scopes are ${SCOPES.join(", ")} (e.g. bob:<token>:crm.read+crm.query).`,
    );
  }
  return { token: value.slice(0, colon), scopes: SCOPES.filter((s) => named.includes(s)) };
}

function sha256(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}
