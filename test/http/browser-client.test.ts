import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { build } from "esbuild";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningHttpServer } from "../../src/http/http-server.js";
import { must } from "../helpers/must.js";
import { needs } from "../helpers/needs.js";
import { launchBrowser } from "../report/browser-support.js";
import { type HttpUnderTest, httpUnderTest } from "./http-under-test.js";

/**
 * A real browser page on another origin (http://localhost:<port>) runs the SDK's own client,
 * bundled for the browser, against `serve --http` on http://127.0.0.1:<port>/mcp: the browser
 * itself sends the preflight and enforces the CORS answer, so what passes here passes for any
 * web client.
 */

const TOKEN = "browser-token-0123456789abcdef";

/** What the page exposes to the test: one MCP session that lists the tools. */
const PAGE_SCRIPT = `
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
window.listTools = async (url, token, modern) => {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: "Bearer " + token } },
  });
  const client = new Client(
    { name: "browser-page", version: "1.0.0" },
    modern ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
  );
  try {
    await client.connect(transport);
    const { tools } = await client.listTools();
    return { ok: true, tools: tools.map((t) => t.name) };
  } catch (error) {
    return { ok: false, error: String(error) };
  } finally {
    await client.close().catch(() => {});
  }
};
window.postWithoutToken = async (url) => {
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });
  return { status: response.status, challenge: response.headers.get("WWW-Authenticate") };
};
`;

/** What PAGE_SCRIPT puts on the page's global object (the tests' tsconfig has no DOM types;
 * page.evaluate sends each callback's source to the page, so each names it itself). */
interface PageApi {
  listTools(
    url: string,
    token: string,
    modern: boolean,
  ): Promise<{ ok: boolean; tools?: string[]; error?: string }>;
  postWithoutToken(url: string): Promise<{ status: number; challenge: string | null }>;
}

let env: HttpUnderTest;
let browser: Browser;
let pages: Server;
let pageOrigin: string;

beforeAll(async () => {
  const bundled = await build({
    stdin: { contents: PAGE_SCRIPT, resolveDir: import.meta.dirname, loader: "js" },
    bundle: true,
    platform: "browser",
    format: "esm",
    write: false,
    logLevel: "silent",
  });
  const script = must(bundled.outputFiles[0], "bundled script").text;
  pages = createServer((req, res) => {
    if (req.url === "/client.js") {
      res.writeHead(200, { "content-type": "text/javascript" }).end(script);
    } else if (req.url === "/") {
      res
        .writeHead(200, { "content-type": "text/html; charset=utf-8" })
        .end(
          '<!doctype html><title>client</title><script type="module" src="/client.js"></script>',
        );
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => pages.listen(0, "127.0.0.1", resolve));
  // localhost, not 127.0.0.1: the page's origin differs from the server's by host and port.
  pageOrigin = `http://localhost:${(pages.address() as AddressInfo).port}`;
  env = await httpUnderTest();
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await env?.close();
  if (pages !== undefined) await new Promise((resolve) => pages.close(resolve));
});

async function openPage(): Promise<{ page: Page; console: string[] }> {
  const page = await browser.newPage();
  const console: string[] = [];
  page.on("console", (m) => console.push(m.text()));
  await page.goto(`${pageOrigin}/`);
  await page.waitForFunction(
    () => typeof (globalThis as unknown as Partial<PageApi>).listTools === "function",
  );
  return { page, console };
}

function startServer(allowedOrigins: string | undefined): Promise<RunningHttpServer> {
  return env.start({
    CRM_HTTP_TOKENS: `browser:${TOKEN}`,
    ...(allowedOrigins === undefined ? {} : { CRM_HTTP_ALLOWED_ORIGINS: allowedOrigins }),
  });
}

describe("a browser page on another origin", needs("chromium"), () => {
  it("lists the tools with the SDK's client when its origin is allowed (both eras)", async () => {
    const server = await startServer(`https://app.example.com,${pageOrigin}`);
    const { page } = await openPage();
    try {
      for (const modern of [false, true]) {
        const result = await page.evaluate(
          ([url, token, pinned]) =>
            (globalThis as unknown as PageApi).listTools(url, token, pinned),
          [server.url, TOKEN, modern] as const,
        );
        expect({ modern, ok: result.ok, error: result.error }).toEqual({
          modern,
          ok: true,
          error: undefined,
        });
        expect(result.tools).toContain("query_export");
      }
      // Without a token the page still reads the 401 and its challenge, so it can ask for one.
      const refused = await page.evaluate(
        (url) => (globalThis as unknown as PageApi).postWithoutToken(url),
        server.url,
      );
      expect(refused.status).toBe(401);
      expect(refused.challenge).toMatch(/^Bearer /);
    } finally {
      await page.close();
    }
  });

  it("is refused by the browser when its origin is not allowed", async () => {
    for (const allowed of [undefined, "https://app.example.com"]) {
      const server = await startServer(allowed);
      const { page, console } = await openPage();
      try {
        const result = await page.evaluate(
          ([url, token]) => (globalThis as unknown as PageApi).listTools(url, token, false),
          [server.url, TOKEN] as const,
        );
        expect(result.ok).toBe(false);
        expect(result.error).toMatch(/Failed to fetch/);
        // The preflight got the 403, without CORS headers, so the request itself was never sent.
        expect(console.join("\n")).toMatch(
          /blocked by CORS policy: Response to preflight request doesn't pass access control check/,
        );
        const preflight = await fetch(server.url, {
          method: "OPTIONS",
          headers: { Origin: pageOrigin, "Access-Control-Request-Method": "POST" },
        });
        expect(preflight.status).toBe(403);
        expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
      } finally {
        await page.close();
      }
    }
  });
});
