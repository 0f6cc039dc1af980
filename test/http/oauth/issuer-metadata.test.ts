import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  DiscoveryError,
  discoverIssuer,
  discoveryUrls,
} from "../../../src/http/oauth/issuer-metadata.js";
import { must } from "../../helpers/must.js";

let server: Server | undefined;

afterEach(async () => {
  await new Promise<void>((resolve) =>
    server === undefined ? resolve() : server.close(() => resolve()),
  );
  server = undefined;
});

/** An issuer's host that serves `documents` by path, recording the paths asked for. */
async function issuerHost(
  documents: (origin: string) => Record<string, unknown>,
): Promise<{ origin: string; asked: string[] }> {
  const asked: string[] = [];
  let origin = "";
  server = createServer((req, res) => {
    const path = must(req.url, "request URL");
    asked.push(path);
    const document = documents(origin)[path];
    if (document === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(document));
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, asked };
}

describe("authorization server discovery", () => {
  it("tries RFC 8414, then OpenID with the path inserted, then appended", () => {
    expect(discoveryUrls("https://login.example.com")).toEqual([
      "https://login.example.com/.well-known/oauth-authorization-server",
      "https://login.example.com/.well-known/openid-configuration",
    ]);
    expect(discoveryUrls("https://login.example.com/tenant-1/v2.0/")).toEqual([
      "https://login.example.com/.well-known/oauth-authorization-server/tenant-1/v2.0",
      "https://login.example.com/.well-known/openid-configuration/tenant-1/v2.0",
      "https://login.example.com/tenant-1/v2.0/.well-known/openid-configuration",
    ]);
  });

  it("finds an issuer with a path whose metadata is only at the appended OpenID path (Entra ID, Keycloak)", async () => {
    const host = await issuerHost((origin) => ({
      "/realms/crm/.well-known/openid-configuration": {
        issuer: `${origin}/realms/crm`,
        jwks_uri: `${origin}/realms/crm/certs`,
      },
    }));
    const metadata = await discoverIssuer(`${host.origin}/realms/crm`);
    expect(metadata.jwks_uri).toBe(`${host.origin}/realms/crm/certs`);
    expect(host.asked).toEqual([
      "/.well-known/oauth-authorization-server/realms/crm",
      "/.well-known/openid-configuration/realms/crm",
      "/realms/crm/.well-known/openid-configuration",
    ]);
  });

  it("prefers RFC 8414 metadata when the issuer serves it", async () => {
    const host = await issuerHost((origin) => ({
      "/.well-known/oauth-authorization-server": { issuer: origin, jwks_uri: `${origin}/keys` },
      "/.well-known/openid-configuration": { issuer: origin, jwks_uri: `${origin}/other` },
    }));
    expect((await discoverIssuer(host.origin)).jwks_uri).toBe(`${host.origin}/keys`);
    expect(host.asked).toEqual(["/.well-known/oauth-authorization-server"]);
  });

  it("refuses a document for another issuer, saying what it states (a trailing slash counts)", async () => {
    const host = await issuerHost((origin) => ({
      "/.well-known/openid-configuration": { issuer: `${origin}/`, jwks_uri: `${origin}/keys` },
    }));
    const failure = discoverIssuer(host.origin);
    await expect(failure).rejects.toThrow(DiscoveryError);
    await expect(failure).rejects.toThrow(`states issuer "${host.origin}/"`);
  });

  it("refuses metadata without a usable jwks_uri", async () => {
    const host = await issuerHost((origin) => ({
      "/.well-known/openid-configuration": { issuer: origin, jwks_uri: "http://keys.example.com/" },
    }));
    await expect(discoverIssuer(host.origin)).rejects.toThrow(/no https jwks_uri/);
  });
});
