import { describe, expect, it } from "vitest";
import { findToken, matchToken, parseTokens, TokenConfigError } from "../../src/http/tokens.js";

const A = "a".repeat(20);
const B = "0123456789abcdef0123";

describe("CRM_HTTP_TOKENS", () => {
  it("reads name:token, bare tokens and name:token:scope+scope", () => {
    const { tokens, secrets } = parseTokens(
      `alice:${A}, ${B} ,bob:${B}x:crm.read+crm.query,carol:${A}y:crm.export`,
    );
    expect(tokens.map((t) => [t.name, t.scopes])).toEqual([
      ["alice", ["crm.read", "crm.export", "crm.query"]],
      [expect.stringMatching(/^token-[0-9a-f]{8}$/), ["crm.read", "crm.export", "crm.query"]],
      ["bob", ["crm.read", "crm.query"]],
      ["carol", ["crm.export"]],
    ]);
    // The scopes are not part of the token: the token alone is what the client sends.
    expect(secrets).toEqual([A, B, `${B}x`, `${A}y`]);
    expect(findToken(tokens, `${B}x`)?.scopes).toEqual(["crm.read", "crm.query"]);
    expect(matchToken(tokens, `${B}x:crm.read+crm.query`)).toBeUndefined();
    expect(matchToken(tokens, A)).toBe("alice");
  });

  it("keeps scopes in their fixed order, once each", () => {
    const { tokens } = parseTokens(`dave:${A}:crm.query+crm.read+crm.query`);
    expect(tokens[0]?.scopes).toEqual(["crm.read", "crm.query"]);
  });

  it("leaves a token whose text after ':' is not a scope list as it was", () => {
    // A token may contain ":" (printable characters): only dotted words joined by "+" are scopes.
    const token = `${A}:not/scopes`;
    const { tokens, secrets } = parseTokens(`erin:${token}`);
    expect(secrets).toEqual([token]);
    expect(tokens[0]?.scopes).toEqual(["crm.read", "crm.export", "crm.query"]);
  });

  it("refuses unknown scopes and an empty scope list, naming the known ones", () => {
    expect(() => parseTokens(`bob:${A}:crm.read+crm.write`)).toThrow(TokenConfigError);
    expect(() => parseTokens(`bob:${A}:crm.read+crm.write`)).toThrow(
      /entry 1: unknown scope "crm.write"; the scopes are crm.read, crm.export, crm.query/,
    );
    expect(() => parseTokens(`alice:${A},bob:${A}:`)).toThrow(/entry 2 ends with ":"/);
  });

  it("still refuses short tokens and bad names", () => {
    expect(() => parseTokens("alice:short:crm.read")).toThrow(/at least 16/);
    expect(() => parseTokens(`al ice:${A}`)).toThrow(/name before/);
  });
});
