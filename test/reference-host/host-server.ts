import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { McpUiResourceCsp } from "@modelcontextprotocol/ext-apps";
import { buildReferenceHost } from "../../scripts/build-reference-host.mjs";

/**
 * The reference host's two servers, and the MCP server its page calls.
 *
 * What upstream's serve.ts does for the reference host, on loopback and free ports: the host page
 * on one origin (with /api/servers naming the MCP server), the sandbox proxy page on another with
 * its Content-Security-Policy header made from the view's declared CSP. serve.ts itself needs
 * express and fixed ports 8080/8081, so its behaviour is repeated here; buildCspHeader below is
 * its function, unchanged but for formatting. The MCP servers the host lists (/api/servers, the
 * SERVERS variable of serve.ts) are set once they run: `serve --http` must know the host's origin
 * first (CRM_HTTP_ALLOWED_ORIGINS), since the host's page calls it from the browser, cross-origin.
 */

export interface ReferenceHost {
  /** The host page's origin, e.g. http://127.0.0.1:PORT (open `${origin}/index.html`). */
  origin: string;
  sandboxOrigin: string;
  /** Every request either server answered, as "METHOD origin/path". */
  requests: string[];
  /** The MCP server URLs the host page connects to. */
  setServers(urls: string[]): void;
  close(): Promise<void>;
}

export async function startReferenceHost(): Promise<ReferenceHost> {
  const requests: string[] = [];
  let servers: string[] = [];
  const pages = { index: "", sandbox: "" };
  const hostServer = createServer((req, res) => {
    requests.push(`${req.method} ${origin}${req.url}`);
    serveHost(req, res);
  });
  const sandboxServer = createServer((req, res) => {
    requests.push(`${req.method} ${sandboxOrigin}${req.url}`);
    serveSandbox(req, res);
  });
  const origin = `http://127.0.0.1:${await listen(hostServer)}`;
  const sandboxOrigin = `http://127.0.0.1:${await listen(sandboxServer)}`;
  const outDir = await mkdtemp(join(tmpdir(), "reference-host-"));
  try {
    const built = await buildReferenceHost({ outDir, sandboxUrl: `${sandboxOrigin}/sandbox.html` });
    pages.index = await readFile(built.index, "utf8");
    pages.sandbox = await readFile(built.sandbox, "utf8");
  } catch (error) {
    await Promise.all([close(hostServer), close(sandboxServer)]);
    throw error;
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }

  function serveHost(req: IncomingMessage, res: ServerResponse): void {
    const path = new URL(req.url ?? "/", origin).pathname;
    if (path === "/") {
      res.writeHead(302, { location: "/index.html" }).end();
    } else if (path === "/index.html") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(pages.index);
    } else if (path === "/api/servers") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(servers));
    } else {
      res.writeHead(404, { "content-type": "text/plain" }).end("Not found");
    }
  }

  function serveSandbox(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? "/", sandboxOrigin);
    if (url.pathname !== "/" && url.pathname !== "/sandbox.html") {
      res.writeHead(404, { "content-type": "text/plain" }).end("Only sandbox.html is served");
      return;
    }
    let csp: McpUiResourceCsp | undefined;
    const param = url.searchParams.get("csp");
    if (param !== null) {
      try {
        csp = JSON.parse(param) as McpUiResourceCsp;
      } catch {
        csp = undefined;
      }
    }
    res
      .writeHead(200, {
        "content-type": "text/html; charset=utf-8",
        "content-security-policy": buildCspHeader(csp),
        "cache-control": "no-cache, no-store, must-revalidate",
      })
      .end(pages.sandbox);
  }

  return {
    origin,
    sandboxOrigin,
    requests,
    setServers: (urls) => {
      servers = urls;
    },
    close: async () => {
      await Promise.all([close(hostServer), close(sandboxServer)]);
    },
  };
}

/** `serve --http` of the built bin, running for the reference host's page. */
export interface McpServer {
  /** Its Streamable HTTP endpoint (the first line it prints). */
  url: string;
  /** Stops it (SIGTERM) and waits for it to exit. */
  close(): Promise<void>;
}

/**
 * Starts `bin serve --http` on a free loopback port, on the embedded sandbox (no service
 * credentials, on its pinned date), its files in `dataDir`. The host's page calls it from
 * `allowedOrigin`, which the server must allow (CORS). `env` adds settings (the sandbox's seed and
 * date, say). Fails with the server's last log lines when it exits before saying where it listens.
 */
export function startMcpServer(options: {
  bin: string;
  dataDir: string;
  allowedOrigin: string;
  env?: Record<string, string>;
}): Promise<McpServer> {
  const child = spawn(process.execPath, [options.bin, "serve", "--http", "--port", "0"], {
    env: {
      PATH: process.env.PATH ?? "",
      CRM_DATA_DIR: options.dataDir,
      CRM_LOG_LEVEL: "warn",
      CRM_HTTP_ALLOWED_ORIGINS: options.allowedOrigin,
      ...options.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    log = (log + chunk).slice(-20_000);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  return new Promise<McpServer>((resolve, reject) => {
    let out = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      const line = out.split("\n")[0];
      if (out.includes("\n") && line !== undefined) {
        resolve({ url: (JSON.parse(line) as { url: string }).url, close });
      }
    });
    child.once("exit", (code) => reject(new Error(`serve --http exited ${code}: ${log}`)));
  });
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
  );
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

// From basic-host/serve.ts (upstream, unchanged but for formatting).
function sanitizeCspDomains(domains?: string[]): string[] {
  if (!domains) return [];
  return domains.filter((d) => typeof d === "string" && !/[;\r\n'" ]/.test(d));
}

function buildCspHeader(csp?: McpUiResourceCsp): string {
  const resourceDomains = sanitizeCspDomains(csp?.resourceDomains).join(" ");
  const connectDomains = sanitizeCspDomains(csp?.connectDomains).join(" ");
  const frameDomains = sanitizeCspDomains(csp?.frameDomains).join(" ") || null;
  const baseUriDomains = sanitizeCspDomains(csp?.baseUriDomains).join(" ") || null;

  const directives = [
    "default-src 'self' 'unsafe-inline'",
    `script-src 'self' 'unsafe-inline' 'unsafe-eval' blob: data: ${resourceDomains}`.trim(),
    `style-src 'self' 'unsafe-inline' blob: data: ${resourceDomains}`.trim(),
    `img-src 'self' data: blob: ${resourceDomains}`.trim(),
    `font-src 'self' data: blob: ${resourceDomains}`.trim(),
    `media-src 'self' data: blob: ${resourceDomains}`.trim(),
    `connect-src 'self' ${connectDomains}`.trim(),
    `worker-src 'self' blob: ${resourceDomains}`.trim(),
    frameDomains ? `frame-src ${frameDomains}` : "frame-src 'none'",
    "object-src 'none'",
    baseUriDomains ? `base-uri ${baseUriDomains}` : "base-uri 'none'",
  ];

  return directives.join("; ");
}
