import { describe, expect, it } from "vitest";
import { AuthGate } from "../../../src/http/auth-gate.js";
import { HttpConfigError, loadHttpSettings } from "../../../src/http/http-config.js";
import { loadOAuthSettings, loadPublicUrl } from "../../../src/http/oauth/oauth-settings.js";

const serve = ["--http", "--host", "0.0.0.0", "--port", "0"];

describe("OAuth settings", () => {
  it("reads the issuer and audience; without an issuer there is no OAuth mode", () => {
    expect(loadOAuthSettings({})).toBeUndefined();
    expect(
      loadOAuthSettings({
        CRM_OAUTH_ISSUER: " https://login.example.com/oauth2/default ",
        CRM_OAUTH_AUDIENCE: "api://crm-mcp",
      }),
    ).toEqual({ issuer: "https://login.example.com/oauth2/default", audience: "api://crm-mcp" });
  });

  it("reads the scope prefix and caller claim, refusing malformed ones", () => {
    const issuer = "https://login.microsoftonline.com/0b7c/v2.0";
    expect(
      loadOAuthSettings({
        CRM_OAUTH_ISSUER: issuer,
        CRM_OAUTH_SCOPE_PREFIX: "api://crm-app/",
        CRM_OAUTH_CALLER_CLAIM: "oid",
      }),
    ).toEqual({
      issuer,
      audience: undefined,
      scopePrefix: "api://crm-app/",
      callerClaim: "oid",
    });
    expect(() =>
      loadOAuthSettings({ CRM_OAUTH_ISSUER: issuer, CRM_OAUTH_SCOPE_PREFIX: "api://a b/" }),
    ).toThrow(/CRM_OAUTH_SCOPE_PREFIX/);
    expect(() =>
      loadOAuthSettings({ CRM_OAUTH_ISSUER: issuer, CRM_OAUTH_CALLER_CLAIM: "a b" }),
    ).toThrow(/CRM_OAUTH_CALLER_CLAIM/);
  });

  it("reads CRM_OAUTH_REQUIRE_AT_JWT as a switch, refusing any other word", () => {
    const issuer = "https://login.example.com/oauth2/default";
    const read = (value: string) =>
      loadOAuthSettings({ CRM_OAUTH_ISSUER: issuer, CRM_OAUTH_REQUIRE_AT_JWT: value });
    for (const on of ["1", "true", "YES"]) expect(read(on)?.requireAtJwt, on).toBe(true);
    for (const off of ["0", "false", "no", " "])
      expect(read(off)?.requireAtJwt, off).toBeUndefined();
    expect(() => read("sometimes")).toThrow(
      'CRM_OAUTH_REQUIRE_AT_JWT must be 1 or 0 (true or false); got "sometimes". Example of a good value: CRM_OAUTH_REQUIRE_AT_JWT=1',
    );
  });

  it("refuses an issuer that is not https (but for loopback), has a query, or is missing", () => {
    expect(() => loadOAuthSettings({ CRM_OAUTH_ISSUER: "http://login.example.com" })).toThrow(
      /must be an https:\/\/ URL/,
    );
    expect(loadOAuthSettings({ CRM_OAUTH_ISSUER: "http://127.0.0.1:8080" })?.issuer).toBe(
      "http://127.0.0.1:8080",
    );
    expect(() => loadOAuthSettings({ CRM_OAUTH_ISSUER: "https://login.example.com/?a=1" })).toThrow(
      /query or fragment/,
    );
    expect(() => loadOAuthSettings({ CRM_OAUTH_ISSUER: "login.example.com" })).toThrow(/not a URL/);
    expect(() => loadOAuthSettings({ CRM_OAUTH_AUDIENCE: "api://crm" })).toThrow(
      /without CRM_OAUTH_ISSUER/,
    );
  });

  it("takes CRM_PUBLIC_URL as the endpoint's URL, adding /mcp to a bare origin", () => {
    expect(loadPublicUrl({ CRM_PUBLIC_URL: "https://crm.example.com" }).publicUrl).toBe(
      "https://crm.example.com/mcp",
    );
    expect(loadPublicUrl({ CRM_PUBLIC_URL: "https://crm.example.com/team/mcp/" }).publicUrl).toBe(
      "https://crm.example.com/team/mcp",
    );
    expect(() => loadPublicUrl({ CRM_PUBLIC_URL: "ftp://crm.example.com" })).toThrow(/http\(s\)/);
  });

  it("lets serve --http listen beyond loopback with OAuth and no static tokens", () => {
    expect(() => loadHttpSettings(serve, {})).toThrow(HttpConfigError);
    const settings = loadHttpSettings(serve, {
      CRM_OAUTH_ISSUER: "https://login.example.com",
      CRM_PUBLIC_URL: "https://crm.example.com/team/mcp",
    });
    expect(settings.oauth?.issuer).toBe("https://login.example.com");
    expect(settings.publicUrl).toBe("https://crm.example.com/team/mcp");
    expect(() => loadHttpSettings(serve, { CRM_OAUTH_ISSUER: "ftp://x" })).toThrow(HttpConfigError);
  });

  it("serves the metadata for the public URL behind a proxy, naming it as the resource and audience", () => {
    const gate = new AuthGate({
      tokens: [],
      oauth: { issuer: "https://login.example.com", audience: undefined },
      resource: () => "https://crm.example.com/team/mcp",
    });
    expect(gate.audience()).toBe("https://crm.example.com/team/mcp");
    for (const path of [
      "/.well-known/oauth-protected-resource",
      "/.well-known/oauth-protected-resource/mcp",
      "/.well-known/oauth-protected-resource/team/mcp",
    ]) {
      expect(gate.metadata(path, "GET")?.body).toMatchObject({
        resource: "https://crm.example.com/team/mcp",
        authorization_servers: ["https://login.example.com"],
      });
    }
    expect(gate.metadata("/.well-known/oauth-protected-resource", "POST")?.status).toBe(405);
    expect(gate.metadata("/.well-known/oauth-protected-resource", "OPTIONS")?.status).toBe(204);
    expect(gate.metadata("/mcp", "GET")).toBeUndefined();
  });

  it("tells clients the scope names with the configured prefix (Entra ID)", async () => {
    const gate = new AuthGate({
      tokens: [],
      oauth: { issuer: "https://login.example.com", audience: "0b7c", scopePrefix: "api://0b7c/" },
      resource: () => "https://crm.example.com/mcp",
    });
    expect(gate.metadata("/.well-known/oauth-protected-resource", "GET")?.body).toMatchObject({
      scopes_supported: ["api://0b7c/crm.read", "api://0b7c/crm.export", "api://0b7c/crm.query"],
    });
    const refused = await gate.authenticate(undefined);
    expect(refused.kind === "refused" && refused.answer.headers["WWW-Authenticate"]).toContain(
      'scope="api://0b7c/crm.read api://0b7c/crm.export api://0b7c/crm.query"',
    );
    const forbidden = gate.scopeRefusal(
      { token: "[bearer]", clientId: "alice", scopes: ["crm.read"] },
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "start_export" } },
    );
    expect(forbidden?.status).toBe(403);
    expect(forbidden?.headers["WWW-Authenticate"]).toContain('scope="api://0b7c/crm.export"');
  });
});
