import { createHash, timingSafeEqual } from "node:crypto";

/**
 * Bearer tokens of `serve --http`, from CRM_HTTP_TOKENS: comma-separated entries, each
 * `name:token` (the name is what logs and the ledger show as who created a job) or a bare
 * `token` (named `token-<first 8 hex digits of its SHA-256>`, which identifies it without
 * revealing it). Several entries may share a name: that is how a token is rotated (the old and
 * the new one both work until the old one is removed).
 */
export interface HttpToken {
  name: string;
  /** SHA-256 of the token: compared in constant time, and the token itself is not kept. */
  digest: Buffer;
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
    const token = colon === -1 ? entry : entry.slice(colon + 1);
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
    tokens.push({ name: name ?? `token-${digest.toString("hex").slice(0, 8)}`, digest });
    secrets.push(token);
  });
  return { tokens, secrets };
}

/**
 * The name of the token `presented` matches, or undefined. Every configured token is compared,
 * each in constant time over equal-length digests, so neither a token's content nor its
 * position in the list shows in the timing.
 */
export function matchToken(tokens: readonly HttpToken[], presented: string): string | undefined {
  const digest = sha256(presented);
  let match: string | undefined;
  for (const token of tokens) {
    if (timingSafeEqual(token.digest, digest) && match === undefined) match = token.name;
  }
  return match;
}

function sha256(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}
