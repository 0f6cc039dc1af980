import { createReadStream } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { pipeline } from "node:stream/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { log } from "../log.js";
import type { SandboxClock } from "./clock.js";
import type { UrlSigner } from "./download-urls.js";
import type { ExportJobs } from "./export-jobs.js";
import { type ServerFaults, throttle } from "./faults.js";
import {
  BodyTooLargeError,
  errorReply,
  type JsonReply,
  parseJsonObject,
  readBody,
} from "./http-util.js";
import { campaignMetrics } from "./metrics-route.js";
import { recommend } from "./recommend-route.js";
import type { FaultAction, SandboxOperation } from "./types.js";
import type { World } from "./world/types.js";

/** One application the sandbox serves, with its own keys, data and export jobs. */
export interface SandboxApp {
  world: World;
  /** Export and metrics key. */
  secretKey: string;
  /** Recommend key. */
  recommendKey: string;
  jobs: ExportJobs;
}

export interface ServerContext {
  /** The first is the application with data; the others exist so foreign keys are real. */
  apps: readonly SandboxApp[];
  clock: SandboxClock;
  faults: ServerFaults;
  signer: UrlSigner;
}

type Route =
  | { operation: "recommend"; app: string; slot: string }
  | { operation: "create_export_job"; app: string }
  | { operation: "get_export_job"; app: string; jobId: string }
  | { operation: "campaign_metrics"; app: string }
  | { operation: "download"; jobId: string };

/** Spec 4 paths; `allow` is set when the path exists under another method. */
export function matchRoute(
  method: string,
  segments: readonly string[],
): { route?: Route; allow?: string } {
  const on = (wanted: string, route: Route): { route?: Route; allow?: string } => {
    if (method === wanted) return { route };
    if (route.operation === "download" && method === "HEAD") return { route };
    return { allow: wanted };
  };
  const [s0, s1, s2, s3, s4, s5] = segments;
  const n = segments.length;
  // /v1/applications/{app}/slots/{slot}/recommend
  if (n === 6 && s0 === "v1" && s1 === "applications" && s3 === "slots" && s5 === "recommend") {
    return on("POST", { operation: "recommend", app: s2 ?? "", slot: s4 ?? "" });
  }
  // /prod/v2/applications/{app}/...
  if (s0 === "prod" && s1 === "v2" && s2 === "applications" && s3 !== undefined) {
    if (n === 5 && s4 === "export-jobs") {
      return on("POST", { operation: "create_export_job", app: s3 });
    }
    if (n === 6 && s4 === "export-jobs" && s5 !== undefined && s5 !== "") {
      return on("GET", { operation: "get_export_job", app: s3, jobId: s5 });
    }
    if (n === 6 && s4 === "campaigns" && s5 === "metrics") {
      return on("GET", { operation: "campaign_metrics", app: s3 });
    }
  }
  if (n === 2 && s0 === "downloads" && s1 !== undefined && s1 !== "") {
    return on("GET", { operation: "download", jobId: s1 });
  }
  return {};
}

function sendJson(res: ServerResponse, reply: JsonReply): void {
  const text = JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
    ...reply.headers,
  });
  res.end(text);
}

function faultReply(action: Extract<FaultAction, { type: "status" }>): JsonReply {
  const headers: Record<string, string> = {};
  if (action.status === 429 || action.retryAfter !== undefined) {
    headers["Retry-After"] = action.retryAfter ?? "1";
  }
  return {
    status: action.status,
    body:
      action.body === undefined ? { message: `Injected fault: HTTP ${action.status}` } : undefined,
    headers,
  };
}

export function createRequestHandler(ctx: ServerContext) {
  const { apps, clock, faults, signer } = ctx;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://sandbox.invalid");
    let segments: string[];
    try {
      segments = url.pathname.split("/").slice(1).map(decodeURIComponent);
    } catch {
      sendJson(res, errorReply(400, "Malformed path"));
      return;
    }
    const method = req.method ?? "GET";
    const { route, allow } = matchRoute(method, segments);
    if (route === undefined) {
      req.resume();
      if (allow !== undefined) {
        sendJson(res, errorReply(405, `Use ${allow} for this path`, undefined, { Allow: allow }));
      } else {
        sendJson(res, errorReply(404, "No such endpoint"));
      }
      return;
    }

    const action = faults.take(route.operation);
    if (action?.type === "delay") await sleep(action.ms);
    if (action?.type === "status") {
      req.resume();
      const reply = faultReply(action);
      if (action.body !== undefined) {
        res.writeHead(reply.status, {
          "Content-Type": "application/json; charset=utf-8",
          ...reply.headers,
        });
        res.end(action.body);
      } else {
        sendJson(res, reply);
      }
      return;
    }

    if (route.operation === "download") {
      await download(route.jobId, url.searchParams, method, res, action);
      return;
    }

    let bodyText = "";
    try {
      bodyText = await readBody(req);
    } catch (error) {
      if (error instanceof BodyTooLargeError) {
        sendJson(res, errorReply(413, "Request body over 1 MiB"));
        return;
      }
      throw error;
    }
    const reply = await answer(route, req.headers.authorization, bodyText, url.searchParams);
    if (action?.type === "drop") {
      // The request was processed (a create made its job); only the answer is lost.
      req.socket.destroy();
      return;
    }
    if (action?.type === "garble") {
      res.writeHead(reply.status, { "Content-Type": "application/json; charset=utf-8" });
      res.end(action.body);
      return;
    }
    sendJson(res, reply);
  }

  async function answer(
    route: Exclude<Route, { operation: "download" }>,
    authorization: string | undefined,
    bodyText: string,
    query: URLSearchParams,
  ): Promise<JsonReply> {
    // Key first: a known application takes only its own key; for an unknown application id any
    // valid key of the right kind gets as far as "not found".
    const app = apps.find((candidate) => candidate.world.applicationId === route.app);
    if (route.operation === "recommend") {
      const keyOk =
        app === undefined
          ? apps.some((candidate) => candidate.recommendKey === authorization)
          : authorization === app.recommendKey;
      if (!keyOk) return errorReply(401, "Authentication failed: missing or wrong secret key");
      if (app === undefined) return errorReply(404, `Application ${route.app} does not exist`);
      return recommend(app.world, route.slot, bodyText, clock.sinceStart());
    }
    // Spec 7.2: export (and, by the same style, metrics) authentication failures are 400.
    const keyOk =
      app === undefined
        ? apps.some((candidate) => candidate.secretKey === authorization)
        : authorization === app.secretKey;
    if (!keyOk) {
      return errorReply(
        400,
        "Authentication failed: the secret key is missing, wrong, or belongs to another application",
        "UnAuthorized",
      );
    }
    if (app === undefined) {
      return errorReply(400, `Application ${route.app} not found`, "ResourceNotFound");
    }
    const { world, jobs } = app;
    switch (route.operation) {
      case "create_export_job": {
        const body = parseJsonObject(bodyText);
        if (body === undefined) return errorReply(400, "The request body must be a JSON object");
        return jobs.create(body);
      }
      case "get_export_job":
        return jobs.get(route.jobId);
      case "campaign_metrics":
        return campaignMetrics(world, query);
    }
  }

  async function download(
    jobId: string,
    params: URLSearchParams,
    method: string,
    res: ServerResponse,
    action: FaultAction | undefined,
  ): Promise<void> {
    const check = signer.check(jobId, params, clock.now());
    if (check !== "ok") {
      sendJson(
        res,
        errorReply(
          403,
          check === "expired"
            ? "The download URL has expired; create a new export job."
            : "The download URL's signature is not valid.",
          "AccessDenied",
        ),
      );
      return;
    }
    const files = await Promise.all(apps.map((app) => app.jobs.file(jobId)));
    const file = files.find((found) => found !== undefined);
    if (file === undefined) {
      sendJson(res, errorReply(404, "No file for this job"));
      return;
    }
    if (action?.type === "drop") {
      res.socket?.destroy();
      return;
    }
    res.writeHead(200, {
      "Content-Type":
        file.ext === "csv"
          ? "text/csv; charset=utf-8"
          : "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
      "Content-Length": file.size,
      "Content-Disposition": `attachment; filename="${file.fileName}.${file.ext}"`,
    });
    if (method === "HEAD") {
      res.end();
      return;
    }
    if (action?.type === "truncate") {
      const bytes = Math.max(0, Math.min(action.bytes, file.size));
      if (bytes > 0) {
        await pipeline(createReadStream(file.path, { start: 0, end: bytes - 1 }), res, {
          end: false,
        });
      }
      // Let the bytes leave before cutting the connection, as a broken upstream would.
      res.socket?.end();
      res.socket?.destroySoon();
      return;
    }
    try {
      if (action?.type === "throttle") {
        await pipeline(createReadStream(file.path), throttle(action.bytesPerSecond), res);
      } else {
        await pipeline(createReadStream(file.path), res);
      }
    } catch (error) {
      // A client that goes away mid-download is its own business, not a server fault.
      if (res.destroyed || res.socket === null || res.writableEnded) {
        log.debug("sandbox download cut by the client", { job: jobId });
        return;
      }
      throw error;
    }
  }

  return (req: IncomingMessage, res: ServerResponse): void => {
    const started = Date.now();
    res.on("close", () => {
      const path = (req.url ?? "/").split("?")[0];
      log.debug("sandbox request", {
        method: req.method,
        path,
        status: res.headersSent ? res.statusCode : 0,
        ms: Date.now() - started,
      });
    });
    handle(req, res).catch((error: unknown) => {
      log.error("sandbox internal error", { error: String(error) });
      if (!res.headersSent) sendJson(res, errorReply(500, "Internal server error"));
      else res.destroy();
    });
  };
}

export type { SandboxOperation };
