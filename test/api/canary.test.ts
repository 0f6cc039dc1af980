import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createApiClient } from "../../src/api/client.js";
import type { ExportJob } from "../../src/api/schemas.js";
import { getLogLevel, setLogLevel } from "../../src/log.js";
import {
  abortOnArrival,
  type FixtureServer,
  freePort,
  startFixtureServer,
} from "../helpers/fixture-server.js";
import { jobJson, listFiles, tempDir } from "./support.js";

/**
 * Sets canary keys, makes the fixture echo them back in every place a careless service might
 * (bodies, codes, messages, headers), drives every error path, and checks that the canary shows
 * up in no error text, no stderr line and no file.
 */

// Characters that JSON and URLs escape: only the escaped forms would reach most outputs.
const CANARY = 'CANARY"key\\7f3a+9b2c1d';
const RECOMMEND_CANARY = "CANARYrecommend55e4d";
/** Every form in which a leaked key could show up. */
const LEAKS = [CANARY, RECOMMEND_CANARY].flatMap((key) => [
  key,
  JSON.stringify(key).slice(1, -1),
  encodeURIComponent(key),
  new URLSearchParams({ k: key }).toString().slice(2),
  key.replace(/"/g, "%22"),
]);

let server: FixtureServer;
let dir: { path: string; cleanup: () => Promise<void> };
const stderr: string[] = [];
const originalWrite = process.stderr.write.bind(process.stderr);
const originalLevel = getLogLevel();

beforeAll(async () => {
  server = await startFixtureServer();
  dir = await tempDir();
  setLogLevel("debug");
  process.stderr.write = ((chunk: string | Uint8Array) => {
    stderr.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"));
    // Debug lines are captured for the checks, not printed (they would bury real failures).
    return true;
  }) as typeof process.stderr.write;
});
afterAll(async () => {
  process.stderr.write = originalWrite;
  setLogLevel(originalLevel);
  await server.close();
  await dir.cleanup();
});

function allText(error: unknown, depth = 0): string {
  if (!(error instanceof Error) || depth > 5) return String(error);
  const own = Object.entries(error)
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(" ");
  return [error.message, error.stack, String(error), own, allText(error.cause, depth + 1)].join(
    "\n",
  );
}

it("the canary keys appear in no error, log line or file", async () => {
  const echo = (req: { headers: Record<string, string | string[] | undefined> }) =>
    String(req.headers.authorization);
  const client = createApiClient({
    baseUrl: server.url,
    realtimeBaseUrl: server.url,
    applicationId: "app",
    secretKey: CANARY,
    recommendSecretKey: RECOMMEND_CANARY,
    dataDir: dir.path,
    retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 2 },
    timeouts: { headersMs: 200 },
  });
  const json = (status: number, body: (key: string) => unknown, headers = {}) => {
    return (
      req: { headers: Record<string, string | string[] | undefined> },
      res: import("node:http").ServerResponse,
    ) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(body(echo(req))));
    };
  };
  const text =
    (status: number) =>
    (
      req: { headers: Record<string, string | string[] | undefined> },
      res: import("node:http").ServerResponse,
    ) => {
      res.writeHead(status);
      res.end(`UnAuthorized: key ${echo(req)} is not valid for app; authorization: ${echo(req)}`);
    };

  const errors: unknown[] = [];
  // Each step asserts its error kind, so a drifting script cannot hide an untested path.
  const capture = async (kind: string, promise: Promise<unknown>) => {
    const error = await promise.then(
      () => new Error("unexpected success"),
      (e: unknown) => e,
    );
    expect((error as { kind?: string }).kind, String(error)).toBe(kind);
    errors.push(error);
  };
  const create = () => client.createExportJob({ type: "campaign_event_data", campaign_id: "c" });

  // Every status of spec 7, the key echoed in each body shape (retried ones get two replies).
  server.reply(json(401, (k) => ({ message: `bad key ${k}` })));
  await capture("authentication", client.recommend("slot", {}));
  server.reply(text(404));
  await capture("not_found", client.recommend("slot", {}));
  server.reply(
    text(412),
    json(412, (k) => ({ error: k })),
  );
  await capture("cache_not_ready", client.recommend("slot", {}));
  server.reply(text(502), text(502));
  await capture("engine_error", client.recommend("slot", {}));
  server.reply(json(400, (k) => ({ code: k })));
  await capture("bad_request", create());
  server.reply(json(400, (k) => ({ error: { code: "UnAuthorized", message: `key ${k}` } })));
  await capture("authentication", create());
  for (const [code, kind] of [
    ["ResourceNotFound", "not_found"],
    ["LimitExceeded", "limit_exceeded"],
    ["ResourceNotReady", "resource_not_ready"],
  ] as const) {
    server.reply(json(400, (k) => ({ errors: [{ code, detail: k }] })));
    await capture(kind, create());
  }
  server.reply(json(429, (k) => ({ key: k }), { "retry-after": "5" }));
  await capture("rate_limited", create());
  server.reply(text(500));
  await capture("server_error", create());
  server.reply(json(200, (k) => ({ _id: 1, application_id: k })));
  await capture("invalid_response", client.getExportJob("j"));
  server.reply((req, res) => {
    res.writeHead(200);
    res.end(`not json ${echo(req)}`);
  });
  await capture(
    "invalid_response",
    client.campaignMetrics({ task_from: "2026-11-01", task_to: "2026-11-02" }),
  );
  server.reply({ reset: true });
  await capture("network", create());
  server.reply({ delayMs: 1_200, json: jobJson() });
  await capture("timeout", create());
  const controller = new AbortController();
  server.reply(abortOnArrival(() => controller.abort(new Error(`abort ${CANARY}`))));
  await capture("aborted", client.getExportJob("j", { signal: controller.signal }));
  const refused = createApiClient({
    baseUrl: `http://127.0.0.1:${await freePort()}`,
    realtimeBaseUrl: `http://127.0.0.1:${await freePort()}`,
    applicationId: CANARY,
    secretKey: CANARY,
    recommendSecretKey: RECOMMEND_CANARY,
    dataDir: dir.path,
    retry: { attempts: 2, baseDelayMs: 1 },
  });
  await capture("network", refused.recommend(CANARY, {}));
  await refused.close();

  // Download paths: refusals and failures, the signature standing in for the key.
  const job = (overrides: Partial<ExportJob>): ExportJob => ({
    ...(jobJson({ status: "completed" }) as ExportJob),
    file_name: "f",
    file_ext: "csv",
    file_size: 10,
    download_url: `${server.url}/f.csv?sig=${CANARY}`,
    download_url_expires_at: new Date(Date.now() + 60_000).toISOString(),
    ...overrides,
  });
  await capture(
    "download_refused",
    client.downloadExport(job({ download_url_expires_at: "2000-01-01T00:00:00Z" })),
  );
  await capture(
    "download_refused",
    client.downloadExport(job({ download_url: `http://example.com/f?sig=${CANARY}` })),
  );
  server.reply(text(403));
  await capture("download_failed", client.downloadExport(job({})));
  server.reply({ body: "short" });
  await capture("download_failed", client.downloadExport(job({})));
  server.reply({ status: 302, headers: { location: `ftp://x/${CANARY}?sig=${CANARY}` } });
  await capture("download_refused", client.downloadExport(job({})));
  await client.close();

  expect(errors).toHaveLength(22);
  for (const error of errors) {
    expect(error).toBeInstanceOf(Error);
    const everything = allText(error);
    for (const leak of LEAKS) expect(everything).not.toContain(leak);
  }
  // The fixture did receive the keys, so the test would catch a leak.
  expect(server.requests.some((r) => r.headers.authorization === CANARY)).toBe(true);
  expect(server.requests.some((r) => r.headers.authorization === RECOMMEND_CANARY)).toBe(true);
  const logged = stderr.join("");
  expect(logged).toContain("retrying");
  // The debug lines carry the bodies that echoed the key, JSON-escaped: the test has teeth.
  expect(logged).toContain("HTTP 400");
  for (const leak of LEAKS) expect(logged).not.toContain(leak);
  for (const file of await listFiles(dir.path)) {
    const content = await readFile(join(dir.path, file), "utf8");
    for (const leak of LEAKS) expect(content).not.toContain(leak);
  }
});
