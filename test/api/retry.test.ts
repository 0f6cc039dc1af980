import { createServer, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AbortedError,
  AuthenticationError,
  BadRequestError,
  CandidateCacheNotReadyError,
  EngineError,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  ServerError,
  TimeoutError,
} from "../../src/api/errors.js";
import { backoffDelay, DEFAULT_RETRY_POLICY, type RetryInfo } from "../../src/api/retry.js";
import {
  abortOnArrival,
  type FixtureReply,
  type FixtureServer,
  fixtureServerForFile,
  freePort,
  startFixtureServer,
} from "../helpers/fixture-server.js";
import { SELF_SIGNED_CERT, SELF_SIGNED_KEY } from "../helpers/self-signed.js";
import { clientFor, jobJson, tempDir } from "./support.js";

const server = fixtureServerForFile();
let dir: { path: string; cleanup: () => Promise<void> };
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(async () => {
  await dir.cleanup();
});

const createBody = { type: "campaign_event_data" as const, campaign_id: "c" };

describe("reads and recommend retry transient failures", () => {
  it.each<[string, FixtureReply]>([
    ["412", { status: 412, body: "" }],
    ["502", { status: 502, body: "" }],
    ["500", { status: 500, body: "" }],
    ["503", { status: 503, body: "" }],
    ["reset", { reset: true }],
  ])("recommend recovers after %s", async (_name, failure) => {
    const client = clientFor(server, dir.path);
    server.reply(failure, failure, { json: { item_ids: ["a"] } });
    await expect(client.recommend("s", {})).resolves.toMatchObject({ item_ids: ["a"] });
    expect(server.requests).toHaveLength(3);
    await client.close();
  });

  it("get job and metrics retry 5xx then succeed", async () => {
    const client = clientFor(server, dir.path);
    server.reply({ status: 503, body: "" }, { json: jobJson() });
    await expect(client.getExportJob("job-1")).resolves.toMatchObject({ _id: "job-1" });
    server.reply({ status: 500, body: "" }, { json: { campaigns: [] } });
    await expect(
      client.campaignMetrics({ task_from: "2026-11-01", task_to: "2026-11-02" }),
    ).resolves.toEqual({ campaigns: [] });
    expect(server.requests).toHaveLength(4);
    await client.close();
  });

  it("stops after the configured number of attempts with the last error", async () => {
    const client = clientFor(server, dir.path, { retry: { attempts: 3, baseDelayMs: 1 } });
    server.setDefault({ status: 412, body: "" });
    await expect(client.recommend("s", {})).rejects.toBeInstanceOf(CandidateCacheNotReadyError);
    expect(server.requests).toHaveLength(3);
    server.reset();
    server.setDefault({ status: 502, body: "" });
    const defaults = clientFor(server, dir.path, {
      retry: { baseDelayMs: 1, attempts: undefined },
    });
    await expect(defaults.recommend("s", {})).rejects.toBeInstanceOf(EngineError);
    expect(server.requests).toHaveLength(DEFAULT_RETRY_POLICY.attempts);
    await client.close();
    await defaults.close();
  });

  it.each<[string, FixtureReply, abstract new (...a: never[]) => Error]>([
    ["401", { status: 401, body: "" }, AuthenticationError],
    ["400 ResourceNotFound", { status: 400, json: { code: "ResourceNotFound" } }, NotFoundError],
    ["400", { status: 400, body: "" }, BadRequestError],
  ])("never retries a permanent %s", async (_name, reply, type) => {
    const client = clientFor(server, dir.path);
    server.setDefault(reply);
    await expect(client.getExportJob("job-1")).rejects.toBeInstanceOf(type);
    expect(server.requests).toHaveLength(1);
    await client.close();
  });
});

describe("backoff", () => {
  it("is capped exponential with full jitter", () => {
    const policy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 100, maxDelayMs: 1000 };
    const top = () => 0.999999;
    expect([1, 2, 3, 4, 5, 6].map((a) => backoffDelay(a, policy, top))).toEqual([
      99, 199, 399, 799, 999, 999,
    ]);
    expect(backoffDelay(3, policy, () => 0)).toBe(0);
    expect(backoffDelay(3, policy, () => 0.5)).toBe(200);
  });

  it("waits the jittered delays between real attempts", async () => {
    const waits: RetryInfo[] = [];
    const client = clientFor(server, dir.path, {
      retry: { attempts: 4, baseDelayMs: 40, maxDelayMs: 100 },
      random: () => 0.999999,
      onRetry: (info) => {
        waits.push(info);
      },
    });
    server.setDefault({ status: 503, body: "" });
    const started = Date.now();
    await expect(client.getExportJob("j")).rejects.toBeInstanceOf(ServerError);
    const elapsed = Date.now() - started;
    expect(waits.map((w) => w.delayMs)).toEqual([39, 79, 99]);
    expect(waits.map((w) => w.attempt)).toEqual([1, 2, 3]);
    expect(elapsed).toBeGreaterThanOrEqual(39 + 79 + 99 - 5);
    await client.close();
  });

  it("honours Retry-After on a 429 of a read when it fits the deadline", async () => {
    const client = clientFor(server, dir.path);
    server.reply({ status: 429, headers: { "retry-after": "1" } }, { json: jobJson() });
    const started = Date.now();
    await expect(client.getExportJob("j", { deadline: Date.now() + 5_000 })).resolves.toMatchObject(
      { _id: "job-1" },
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(990);
    expect(server.requests).toHaveLength(2);
    await client.close();
  });

  it.each<[string, "recommend" | "get", FixtureReply]>([
    ["503 on getting a job", "get", { status: 503, headers: { "retry-after": "1" } }],
    ["412 on recommend", "recommend", { status: 412, headers: { "retry-after": "1" } }],
  ])("honours Retry-After on a %s, not only on a 429", async (_name, operation, failure) => {
    const client = clientFor(server, dir.path);
    server.reply(failure, operation === "get" ? { json: jobJson() } : { json: { item_ids: [] } });
    const started = Date.now();
    if (operation === "get") await client.getExportJob("j");
    else await client.recommend("s", {});
    // Backoff alone would wait at most 20 ms with these test settings.
    expect(Date.now() - started).toBeGreaterThanOrEqual(990);
    expect(server.requests).toHaveLength(2);
    await client.close();
  });

  it("gives up at once when Retry-After does not fit the deadline", async () => {
    const client = clientFor(server, dir.path);
    server.reply({ status: 429, headers: { "retry-after": "30" } });
    const started = Date.now();
    await expect(client.getExportJob("j", { deadline: Date.now() + 2_000 })).rejects.toBeInstanceOf(
      RateLimitedError,
    );
    expect(Date.now() - started).toBeLessThan(500);
    expect(server.requests).toHaveLength(1);
    await client.close();
  });

  it("never sleeps past the deadline", async () => {
    const client = clientFor(server, dir.path, {
      retry: { attempts: 10, baseDelayMs: 400, maxDelayMs: 400 },
      random: () => 0.999,
    });
    server.setDefault({ status: 502, body: "" });
    const started = Date.now();
    await expect(
      client.recommend("s", {}, { deadline: Date.now() + 1_000 }),
    ).rejects.toBeInstanceOf(EngineError);
    const elapsed = Date.now() - started;
    // Waits of ~400ms fit twice before 1s; the third would end past the deadline.
    expect(server.requests).toHaveLength(3);
    expect(elapsed).toBeLessThan(1_000);
    await client.close();
  });

  it("an abort during backoff stops at once", async () => {
    const controller = new AbortController();
    const client = clientFor(server, dir.path, {
      retry: { attempts: 4, baseDelayMs: 5_000, maxDelayMs: 5_000 },
      random: () => 0.999,
      onRetry: () => {
        // On the next turn of the event loop: after the 5-second backoff wait has begun.
        setImmediate(() => controller.abort());
      },
    });
    server.setDefault({ status: 503, body: "" });
    const started = Date.now();
    await expect(client.getExportJob("j", { signal: controller.signal })).rejects.toBeInstanceOf(
      AbortedError,
    );
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(server.requests).toHaveLength(1);
    await client.close();
  });
});

describe("createExportJob is never repeated once the service may have seen it", () => {
  it.each<[string, FixtureReply, abstract new (...a: never[]) => Error]>([
    ["502", { status: 502, body: "" }, ServerError],
    ["500", { status: 500, body: "" }, ServerError],
    ["503", { status: 503, body: "" }, ServerError],
    ["429", { status: 429, headers: { "retry-after": "0" } }, RateLimitedError],
  ])("exactly one create reaches the server on %s", async (_name, reply, type) => {
    const client = clientFor(server, dir.path);
    server.setDefault(reply);
    const error = await client.createExportJob(createBody).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(type);
    expect(server.requests).toHaveLength(1);
    await client.close();
  });

  it("exactly one create on a reset after the request was read, which says it was sent", async () => {
    const client = clientFor(server, dir.path);
    server.setDefault({ reset: true });
    const error = await client.createExportJob(createBody).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).requestSent).toBe(true);
    expect(server.requests).toHaveLength(1);
    await client.close();
  });

  it("exactly one create on a headers timeout", async () => {
    const client = clientFor(server, dir.path, { timeouts: { headersMs: 300 } });
    server.setDefault({ delayMs: 1_500, json: jobJson() });
    const error = await client.createExportJob(createBody).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(server.requests).toHaveLength(1);
    await client.close();
  });

  it("retries a create whose connection was refused, then succeeds once", async () => {
    const port = await freePort();
    let late: FixtureServer | undefined;
    const infos: RetryInfo[] = [];
    const client = clientFor({ ...server, url: `http://127.0.0.1:${port}` }, dir.path, {
      onRetry: async (info) => {
        infos.push(info);
        // The service comes up while we back off.
        late ??= await startFixtureServer({ port });
        late.reply({ json: jobJson({ _id: "job-late" }) });
      },
    });
    const job = await client.createExportJob(createBody);
    expect(job._id).toBe("job-late");
    expect(infos).toHaveLength(1);
    expect(infos[0]?.error).toBeInstanceOf(NetworkError);
    expect((infos[0]?.error as NetworkError | undefined)?.requestSent).toBe(false);
    expect(late?.requests).toHaveLength(1);
    await client.close();
    await late?.close();
  });

  it("a refused connection reports requestSent false after the attempts run out", async () => {
    const port = await freePort();
    let retries = 0;
    const client = clientFor({ ...server, url: `http://127.0.0.1:${port}` }, dir.path, {
      onRetry: () => {
        retries++;
      },
    });
    const error = (await client
      .createExportJob(createBody)
      .catch((e: unknown) => e)) as NetworkError;
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.requestSent).toBe(false);
    expect(error.message).toContain("connection refused");
    expect(retries).toBe(3);
    await client.close();
  });
});

describe("TLS failures", () => {
  it("an untrusted certificate is named as such and not retried", async () => {
    const tls = createHttpsServer({ key: SELF_SIGNED_KEY, cert: SELF_SIGNED_CERT }, (_q, r) => {
      r.end("{}");
    });
    let connections = 0;
    tls.on("connection", () => {
      connections++;
    });
    await new Promise<void>((r) => tls.listen(0, "127.0.0.1", () => r()));
    const address = tls.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    let retries = 0;
    const client = clientFor({ ...server, url: `https://127.0.0.1:${port}` }, dir.path, {
      onRetry: () => {
        retries++;
      },
    });
    const error = (await client.getExportJob("j").catch((e: unknown) => e)) as NetworkError;
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.message).toContain("certificate");
    expect(error.message).not.toContain("could not reach");
    expect(error.code).toBe("DEPTH_ZERO_SELF_SIGNED_CERT");
    expect(retries).toBe(0);
    expect(connections).toBe(1);
    await client.close();
    await new Promise<void>((r) => tls.close(() => r()));
  });
});

describe("timeouts and abort", () => {
  it("a headers timeout on a read is a TimeoutError after retries", async () => {
    const client = clientFor(server, dir.path, {
      timeouts: { headersMs: 200 },
      retry: { attempts: 2, baseDelayMs: 1 },
    });
    server.setDefault({ delayMs: 1_200, json: jobJson() });
    await expect(client.getExportJob("j")).rejects.toBeInstanceOf(TimeoutError);
    expect(server.requests).toHaveLength(2);
    await client.close();
  });

  it("the overall deadline cuts a slow response", async () => {
    const client = clientFor(server, dir.path);
    server.setDefault({ delayMs: 2_000, json: jobJson() });
    const started = Date.now();
    const error = await client
      .getExportJob("j", { deadline: Date.now() + 300 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toContain("deadline");
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(server.requests).toHaveLength(1);
    await client.close();
  });

  it("a deadline already past sends nothing", async () => {
    const client = clientFor(server, dir.path);
    await expect(client.getExportJob("j", { deadline: Date.now() - 1 })).rejects.toBeInstanceOf(
      TimeoutError,
    );
    expect(server.requests).toHaveLength(0);
    await client.close();
  });

  it("the caller's abort during a request is an AbortedError and is not retried", async () => {
    const client = clientFor(server, dir.path);
    const controller = new AbortController();
    server.setDefault(abortOnArrival(() => controller.abort()));
    const started = Date.now();
    await expect(client.recommend("s", {}, { signal: controller.signal })).rejects.toBeInstanceOf(
      AbortedError,
    );
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(server.requests).toHaveLength(1);
    await client.close();
  });

  it("a stalled body is a timeout", async () => {
    const stall: Server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"item_ids":');
    });
    await new Promise<void>((r) => stall.listen(0, "127.0.0.1", () => r()));
    const address = stall.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    const client = clientFor({ ...server, url: `http://127.0.0.1:${port}` }, dir.path, {
      timeouts: { bodyMs: 200 },
      retry: { attempts: 1 },
    });
    const error = await client.recommend("s", {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    await client.close();
    stall.closeAllConnections();
    await new Promise<void>((r) => stall.close(() => r()));
  });
});
