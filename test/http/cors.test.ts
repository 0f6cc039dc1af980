import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CORS_ALLOW_HEADERS,
  CORS_ALLOW_METHODS,
  CORS_EXPOSE_HEADERS,
  parseAllowedOrigins,
} from "../../src/http/cors.js";
import { loadHttpSettings } from "../../src/http/http-config.js";
import type { RunningHttpServer } from "../../src/http/http-server.js";
import {
  type HttpUnderTest,
  httpUnderTest,
  initializeRequest,
  postJson,
} from "./http-under-test.js";

const TOKEN = "alice-token-0123456789abcdef";
const APP = "https://app.example.com";
const LOCAL_PAGE = "http://localhost:8080";

let env: HttpUnderTest;
let server: RunningHttpServer;

beforeAll(async () => {
  env = await httpUnderTest();
  server = await env.start({
    CRM_HTTP_TOKENS: `alice:${TOKEN}`,
    CRM_HTTP_ALLOWED_ORIGINS: `${APP}, ${LOCAL_PAGE}`,
  });
});

afterAll(async () => {
  await env?.close();
});

function preflight(
  origin: string,
  requestHeaders = "authorization,content-type,mcp-protocol-version",
) {
  return fetch(server.url, {
    method: "OPTIONS",
    headers: {
      Origin: origin,
      "Access-Control-Request-Method": "POST",
      "Access-Control-Request-Headers": requestHeaders,
    },
  });
}

function corsHeaders(response: Response): Record<string, string> {
  return Object.fromEntries(
    [...response.headers].filter(([name]) => name.startsWith("access-control-")),
  );
}

describe("CRM_HTTP_ALLOWED_ORIGINS", () => {
  it("takes exact origins, normalised as browsers send them", () => {
    expect(parseAllowedOrigins(undefined)).toEqual([]);
    expect(parseAllowedOrigins("  ")).toEqual([]);
    expect(
      parseAllowedOrigins(
        "https://App.Example.com, http://localhost:8080/,https://app.example.com:443",
      ),
    ).toEqual(["https://app.example.com", "http://localhost:8080"]);
  });

  it.each([
    ["app.example.com", /entry 1 "app.example.com" has no scheme.*https:\/\/app\.example\.com/],
    ["localhost:8080", /has no scheme.*http:\/\/localhost:8080/],
    ["https://app.example.com/mcp", /has a path/],
    ["*", /wildcard/],
    ["https://*.example.com", /wildcard/],
    ["null", /sandboxed and file pages/],
    ["https://a.example,,https://b.example", /entry 2 is empty/],
    ["ftp://files.example.com", /not an http or https origin/],
    ["https://user@app.example.com", /more than an origin/],
    ["https://exa mple.com", /is not an origin/],
  ])("refuses %j at start-up, naming the variable", (raw, message) => {
    expect(() => loadHttpSettings(["--http"], { CRM_HTTP_ALLOWED_ORIGINS: raw })).toThrow(
      /^CRM_HTTP_ALLOWED_ORIGINS /,
    );
    expect(() => parseAllowedOrigins(raw)).toThrow(message);
  });
});

describe("CORS on /mcp", () => {
  it("answers an allowed origin's preflight with 204, without a token", async () => {
    const response = await preflight(APP);
    expect(response.status).toBe(204);
    expect(corsHeaders(response)).toEqual({
      "access-control-allow-origin": APP,
      "access-control-allow-methods": CORS_ALLOW_METHODS,
      "access-control-allow-headers": CORS_ALLOW_HEADERS,
      "access-control-expose-headers": CORS_EXPOSE_HEADERS,
      "access-control-max-age": "600",
    });
    expect(response.headers.get("vary")).toBe("Origin");
    for (const method of ["POST", "GET", "DELETE"]) expect(CORS_ALLOW_METHODS).toContain(method);
    for (const header of [
      "Authorization",
      "Content-Type",
      "Accept",
      "MCP-Protocol-Version",
      "Mcp-Method",
      "Mcp-Name",
      "Last-Event-ID",
    ]) {
      expect(CORS_ALLOW_HEADERS.split(", ")).toContain(header);
    }
  });

  it("refuses any other origin's preflight and request with 403 and no CORS headers", async () => {
    for (const origin of [
      "https://evil.example",
      // Same host, other port or scheme: another site.
      "http://localhost:5173",
      "http://app.example.com",
      "https://app.example.com.evil.example",
      "null",
    ]) {
      const refused = await preflight(origin);
      expect({ origin, status: refused.status }).toEqual({ origin, status: 403 });
      expect(corsHeaders(refused)).toEqual({});
      const post = await postJson(server.url, initializeRequest(), {
        Authorization: `Bearer ${TOKEN}`,
        Origin: origin,
      });
      expect({ origin, status: post.status }).toEqual({ origin, status: 403 });
      expect(corsHeaders(post)).toEqual({});
      expect(await post.text()).toContain("CRM_HTTP_ALLOWED_ORIGINS");
    }
  });

  it("sends Allow-Origin and the exposed headers on an allowed origin's responses, never *", async () => {
    const ok = await postJson(server.url, initializeRequest(), {
      Authorization: `Bearer ${TOKEN}`,
      Origin: LOCAL_PAGE,
    });
    expect(ok.status).toBe(200);
    expect(corsHeaders(ok)).toEqual({
      "access-control-allow-origin": LOCAL_PAGE,
      "access-control-expose-headers": CORS_EXPOSE_HEADERS,
    });
    expect(ok.headers.get("vary")).toBe("Origin");
    await ok.body?.cancel();
  });

  it("lets the page read the 401 and its challenge", async () => {
    const response = await postJson(server.url, initializeRequest(), { Origin: APP });
    expect(response.status).toBe(401);
    expect(response.headers.get("access-control-allow-origin")).toBe(APP);
    expect(response.headers.get("access-control-expose-headers")).toContain("WWW-Authenticate");
    expect(response.headers.get("www-authenticate")).toMatch(/^Bearer /);
  });

  it("sends no CORS headers to clients without Origin (not browsers)", async () => {
    const response = await postJson(server.url, initializeRequest(), {
      Authorization: `Bearer ${TOKEN}`,
    });
    expect(response.status).toBe(200);
    expect(corsHeaders(response)).toEqual({});
    await response.body?.cancel();
  });

  it("refuses every Origin when none is configured, loopback pages included", async () => {
    const closed = await env.start({});
    for (const origin of [LOCAL_PAGE, "http://127.0.0.1:3000", APP]) {
      const refused = await fetch(closed.url, {
        method: "OPTIONS",
        headers: { Origin: origin, "Access-Control-Request-Method": "POST" },
      });
      expect({ origin, status: refused.status }).toEqual({ origin, status: 403 });
      expect(corsHeaders(refused)).toEqual({});
    }
    const plain = await postJson(closed.url, initializeRequest());
    expect(plain.status).toBe(200);
    await plain.body?.cancel();
  });

  it("lets the server's own origin in as same-origin, without CORS headers", async () => {
    const own = new URL(server.url).origin;
    const response = await postJson(server.url, initializeRequest(), {
      Authorization: `Bearer ${TOKEN}`,
      Origin: own,
    });
    expect(response.status).toBe(200);
    expect(corsHeaders(response)).toEqual({});
    await response.body?.cancel();
    // The same host on another port is another origin.
    const port = Number(new URL(server.url).port);
    const other = await postJson(server.url, initializeRequest(), {
      Authorization: `Bearer ${TOKEN}`,
      Origin: `http://127.0.0.1:${port === 65535 ? port - 1 : port + 1}`,
    });
    expect(other.status).toBe(403);
  });
});
