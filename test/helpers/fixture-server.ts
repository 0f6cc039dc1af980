import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll } from "vitest";

/**
 * A scripted HTTP server on loopback for tests: each request takes the next scripted reply (or
 * the default one) and is recorded with its headers and body, so a test can assert exactly what
 * reached the server.
 */

export interface RecordedRequest {
  method: string;
  /** Path and query as sent. */
  url: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
}

export type FixtureReply =
  | {
      status?: number;
      headers?: Record<string, string>;
      /** Serialized as the body with `content-type: application/json`. */
      json?: unknown;
      body?: string | Buffer;
      /** Waits before sending headers (to trigger timeouts). */
      delayMs?: number;
    }
  /** Destroys the connection after the whole request was read: the server saw it, no answer. */
  | { reset: true }
  /** Full control. */
  | ((request: RecordedRequest, response: ServerResponse) => void | Promise<void>);

export interface FixtureServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** Appends replies to the script; each request consumes one. */
  reply(...replies: FixtureReply[]): void;
  /** Used once the script is empty (default: 500 "no scripted reply"). */
  setDefault(reply: FixtureReply): void;
  /** Forgets recorded requests and unused replies and restores the default reply. */
  reset(): void;
  close(): Promise<void>;
}

const NO_SCRIPTED_REPLY: FixtureReply = { status: 500, json: { error: "no scripted reply" } };

/**
 * A reply that calls `abort` as the request arrives and never answers: the caller's abort lands
 * while its request is in flight, however slow the machine (a timer could fire before the
 * request was even sent).
 */
export function abortOnArrival(abort: () => void): FixtureReply {
  return () => {
    abort();
  };
}

export async function startFixtureServer(
  options: { host?: string; port?: number } = {},
): Promise<FixtureServer> {
  const host = options.host ?? "127.0.0.1";
  const requests: RecordedRequest[] = [];
  const script: FixtureReply[] = [];
  let fallback: FixtureReply = NO_SCRIPTED_REPLY;

  const server = createServer((req, res) => {
    void handle(req, res).catch(() => res.destroy());
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const parsed = new URL(req.url ?? "/", "http://fixture");
    const recorded: RecordedRequest = {
      method: req.method ?? "GET",
      url: req.url ?? "/",
      path: parsed.pathname,
      query: parsed.searchParams,
      headers: req.headers,
      body: Buffer.concat(chunks).toString("utf8"),
    };
    requests.push(recorded);
    const reply = script.shift() ?? fallback;
    if (typeof reply === "function") {
      await reply(recorded, res);
      return;
    }
    if ("reset" in reply) {
      req.socket.destroy();
      return;
    }
    // The service's configured slowness (a timeout under test), not a wait for an event.
    if (reply.delayMs !== undefined) await new Promise((r) => setTimeout(r, reply.delayMs));
    if (res.destroyed) return;
    const headers: Record<string, string> = { ...reply.headers };
    let body: string | Buffer = reply.body ?? "";
    if (reply.json !== undefined) {
      body = JSON.stringify(reply.json);
      headers["content-type"] ??= "application/json";
    }
    res.writeHead(reply.status ?? 200, headers);
    res.end(body);
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${port}`,
    port,
    requests,
    reply: (...replies) => script.push(...replies),
    setDefault: (reply) => {
      fallback = reply;
    },
    reset: () => {
      requests.length = 0;
      script.length = 0;
      fallback = NO_SCRIPTED_REPLY;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * One fixture server for a test file: started before its tests, reset after each (so no test
 * sees another's requests or leftover replies), closed at the end. The returned object forwards
 * to it, so it can be used like the server itself from inside tests.
 */
export function fixtureServerForFile(
  options: { host?: string; port?: number } = {},
): FixtureServer {
  let current: FixtureServer | undefined;
  const server = (): FixtureServer => {
    if (current === undefined) throw new Error("fixture server used outside a test");
    return current;
  };
  beforeAll(async () => {
    current = await startFixtureServer(options);
  });
  afterEach(() => current?.reset());
  afterAll(async () => {
    await current?.close();
  });
  return {
    get url() {
      return server().url;
    },
    get port() {
      return server().port;
    },
    get requests() {
      return server().requests;
    },
    reply: (...replies) => server().reply(...replies),
    setDefault: (reply) => server().setDefault(reply),
    reset: () => server().reset(),
    close: () => server().close(),
  };
}

/** A port on 127.0.0.1 that nothing listens on (bound, then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
