import {
  createServer as createHttpServer,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { toNodeHandler } from "@modelcontextprotocol/node";
import {
  type AuthInfo,
  createMcpHandler,
  localhostAllowedHostnames,
  validateHostHeader,
} from "@modelcontextprotocol/server";
import { clipValue } from "../clip.js";
import type { Config } from "../config.js";
import { log } from "../log.js";
import { isLoopbackHost } from "../loopback-host.js";
import { callerOfAuth } from "../mcp/caller.js";
import type { ToolRuntime } from "../mcp/tool.js";
import { createServer, TOOL_NAMES } from "../server.js";
import { AuthGate, sendAnswer } from "./auth-gate.js";
import { answerPreflight, corsDecision, isPreflight, setCorsHeaders } from "./cors.js";
import { recordRefusedRequest } from "./denied-calls.js";
import type { HttpSettings } from "./http-config.js";
import { bracketed, pathOf, readBody, reply, rpcError } from "./http-messages.js";
import { cancelledRequestId, LegacyCancels, requestIdOf } from "./legacy-cancels.js";

/**
 * MCP over Streamable HTTP at `/mcp`, stateless per request (the SDK's createMcpHandler builds a
 * server instance for each request, for both protocol eras), so any number of processes can run
 * behind a load balancer with the ledger in PostgreSQL. In front of the SDK's handler, in order:
 * the Host check (DNS rebinding), the Origin check and CORS (cors.ts), the bearer token, the body
 * size and the number of requests in flight. `/health` answers a load balancer.
 */
export interface HttpServerOptions {
  config: Config;
  settings: HttpSettings;
  runtime: ToolRuntime;
  sandboxGuide?: string | undefined;
  version: string;
  /** The clock access tokens are judged by (tests); the system clock otherwise. */
  clock?: () => number;
}

export interface RunningHttpServer {
  /** `http://host:port/mcp` */
  url: string;
  port: number;
  /** Requests being served now (MCP and health). */
  inFlight(): number;
  /**
   * Stops accepting requests, lets the ones in flight finish for up to `graceMs`, then cuts the
   * rest (their tool calls see a cancellation) and closes the runtime.
   */
  close(graceMs?: number): Promise<void>;
}

export async function startHttpServer(options: HttpServerOptions): Promise<RunningHttpServer> {
  const { config, settings, runtime } = options;
  const loopback = isLoopbackHost(settings.host);
  const allowedHosts = [
    ...(loopback ? localhostAllowedHostnames() : []),
    ...settings.allowedHosts.map(bracketed),
  ];

  // The listening address, once known: the resource's URL unless CRM_PUBLIC_URL says otherwise.
  let listeningUrl = "";
  const gate = new AuthGate({
    tokens: settings.tokens,
    oauth: settings.oauth,
    resource: () => settings.publicUrl ?? listeningUrl,
    audit: runtime.audit,
    ...(options.clock === undefined ? {} : { now: options.clock }),
  });

  const mcp = createMcpHandler(
    (ctx) =>
      createServer(config, {
        runtime,
        ...(options.sandboxGuide === undefined ? {} : { sandboxGuide: options.sandboxGuide }),
        // Only what the caller's scopes allow is registered: tools/list shows just that.
        ...(ctx.authInfo === undefined ? {} : { scopes: ctx.authInfo.scopes }),
      }).server,
    {
      legacy: "stateless",
      maxRequestBodySize: settings.maxBodyBytes,
      onerror: (error) => log.debug("mcp handler", { error: error.message }),
    },
  );
  const nodeHandler = toNodeHandler(mcp, {
    maxRequestBodySize: settings.maxBodyBytes,
    onerror: (error) => log.warn("mcp request failed", { error: error.message }),
  });

  let inFlight = 0;
  let draining = false;
  const idle = new Set<() => void>();

  const handle = async (req: IncomingMessage & { auth?: AuthInfo }, res: ServerResponse) => {
    const started = Date.now();
    inFlight += 1;
    let who: string | undefined;
    res.once("close", () => {
      inFlight -= 1;
      log.info("http request", {
        method: req.method,
        path: pathOf(req),
        status: res.statusCode,
        ...(who === undefined ? {} : { token: who }),
        ms: Date.now() - started,
      });
      if (inFlight === 0) for (const resolve of idle) resolve();
    });
    const path = pathOf(req);
    const host = validateHostHeader(req.headers.host, allowedHosts);
    if (allowedHosts.length > 0 && !host.ok) {
      return reply(res, 403, rpcError(-32000, `Forbidden: ${host.message}`));
    }
    if (path === "/health") {
      if (req.method !== "GET" && req.method !== "HEAD")
        return reply(res, 405, { error: "GET only" });
      return health(res);
    }
    const metadata = gate.metadata(path, req.method);
    if (metadata !== undefined) return sendAnswer(res, metadata);
    if (path !== "/mcp") return reply(res, 404, { error: "Not found: the MCP endpoint is /mcp." });
    const cors = corsDecision(req, settings.allowedOrigins);
    if (cors.kind === "refused") {
      return reply(
        res,
        403,
        rpcError(
          -32000,
          `Forbidden: Origin ${clipValue(cors.origin, 100)} is not allowed; the server's operator can add it to CRM_HTTP_ALLOWED_ORIGINS.`,
        ),
      );
    }
    if (cors.kind === "allowed") {
      if (isPreflight(req)) return answerPreflight(res, cors.origin);
      setCorsHeaders(res, cors.origin);
    }
    const authenticated = await gate.authenticate(req.headers.authorization);
    if (authenticated.kind === "refused") return sendAnswer(res, authenticated.answer);
    if (authenticated.kind === "caller") {
      req.auth = authenticated.auth;
      who = authenticated.auth.clientId;
    }
    if (draining) {
      res.setHeader("Retry-After", "1");
      return reply(
        res,
        503,
        rpcError(-32000, "The server is shutting down; retry on another instance."),
      );
    }
    const length = Number(req.headers["content-length"] ?? 0);
    if (Number.isFinite(length) && length > settings.maxBodyBytes) {
      res.setHeader("Connection", "close");
      return reply(
        res,
        413,
        rpcError(
          -32000,
          `Payload Too Large: request bodies are limited to ${settings.maxBodyBytes} bytes.`,
        ),
      );
    }
    // Counted before this request was added: health checks count too, so leave them room.
    if (inFlight - 1 >= settings.maxConcurrent) {
      res.setHeader("Retry-After", "1");
      return reply(
        res,
        503,
        rpcError(
          -32000,
          `Busy: ${settings.maxConcurrent} requests are in flight; retry in a second.`,
        ),
      );
    }
    if (req.method !== "POST") return nodeHandler(req, res);
    const body = await readBody(req, settings.maxBodyBytes);
    if (body === "too large") {
      res.setHeader("Connection", "close");
      return reply(
        res,
        413,
        rpcError(
          -32000,
          `Payload Too Large: request bodies are limited to ${settings.maxBodyBytes} bytes.`,
        ),
      );
    }
    let message: unknown;
    try {
      message = JSON.parse(body.toString("utf8"));
    } catch {
      return reply(res, 400, rpcError(-32700, "Parse error: the body is not JSON."));
    }
    // Before dispatch: a request the caller's scopes do not cover runs no part of its work.
    const forbidden = gate.scopeRefusal(req.auth, message);
    if (forbidden !== undefined) {
      void recordRefusedRequest(
        runtime.audit,
        callerOfAuth(req.auth),
        message,
        Date.now(),
        TOOL_NAMES,
      );
      return sendAnswer(res, forbidden);
    }
    const cancelled = cancelledRequestId(message);
    if (cancelled !== undefined) cancels.cancel(who, cancelled);
    const untrack = cancels.track(who, requestIdOf(message), res);
    try {
      await nodeHandler(req, res, message);
    } finally {
      untrack();
    }
  };
  const cancels = new LegacyCancels();

  const health = async (res: ServerResponse) => {
    if (draining) return reply(res, 503, { status: "draining" });
    try {
      // Reads the ledger, so a database that is down shows here.
      await runtime.ledger.budgetStatus();
      reply(res, 200, {
        status: "ok",
        version: options.version,
        ledger: config.databaseUrl === undefined ? "file" : "postgres",
        in_flight: inFlight - 1,
      });
    } catch (error) {
      log.warn("health check failed", {
        error: error instanceof Error ? error.message : String(error),
      });
      reply(res, 503, { status: "ledger unavailable" });
    }
  };

  const server = createHttpServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      log.error("http handler failed", {
        error: error instanceof Error ? error.message : String(error),
      });
      if (!res.headersSent) reply(res, 500, rpcError(-32603, "Internal error"));
      else res.destroy();
    });
  });
  // A client that sends its request slowly cannot hold a connection forever; responses (SSE
  // streams of long tool calls) are not limited by these.
  server.headersTimeout = 20_000;
  server.requestTimeout = 60_000;

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(settings.port, settings.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const url = `http://${bracketed(settings.host)}:${address.port}/mcp`;
  listeningUrl = url;

  let closing: Promise<void> | undefined;
  return {
    url,
    port: address.port,
    inFlight: () => inFlight,
    close(graceMs = settings.shutdownGraceMs) {
      closing ??= (async () => {
        draining = true;
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        if (inFlight > 0) {
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([
            new Promise<void>((resolve) => idle.add(resolve)),
            new Promise<void>((resolve) => {
              timer = setTimeout(resolve, graceMs);
            }),
          ]);
          clearTimeout(timer);
        }
        if (inFlight > 0)
          log.warn("shutdown: cutting requests still running", { in_flight: inFlight });
        // Aborts modern exchanges in flight; cutting the sockets aborts legacy ones.
        await mcp.close();
        server.closeAllConnections();
        await stopped;
        await runtime.close();
      })();
      return closing;
    },
  };
}
