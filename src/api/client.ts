import { join } from "node:path";
import { Agent } from "undici";
import { isLoopbackHost } from "../loopback-host.js";
import { registerSecret } from "../redact.js";
import { PACKAGE_VERSION } from "../version.js";
import { downloadExport } from "./download.js";
import { requestJson } from "./http.js";
import { DEFAULT_RETRY_POLICY, type RetryInfo, type RetryPolicy, withRetry } from "./retry.js";
import {
  exportJobSchema,
  type MetricsQuery,
  metricsResponseSchema,
  recommendResponseSchema,
} from "./schemas.js";
import type { ApiClientOptions, CallOptions, CrmApi } from "./types.js";

/** Timeouts of one attempt; the caller's deadline bounds the whole call on top of these. */
export const DEFAULT_TIMEOUTS = { connectMs: 10_000, headersMs: 30_000, bodyMs: 60_000 };
export const DEFAULT_MAX_DOWNLOAD_BYTES = 2048 * 1024 * 1024;
/**
 * Deadline of a call (retries and waits included) when the caller gives none. MCP clients
 * commonly give up on a tool call after 60 s; four attempts with 30 s header timeouts and
 * backoff could otherwise run for minutes after nobody is listening. Downloads have no default:
 * a large file legitimately takes longer.
 */
export const DEFAULT_CALL_DEADLINE_MS = 45_000;

/** A client with the retry hook tests and logs use; `close` releases its connections. */
export interface ApiClient extends CrmApi {
  close(): Promise<void>;
}

export interface ApiClientExtras {
  /** Called before each backoff wait (awaited): useful in tests and for progress reporting. */
  onRetry?: ((info: RetryInfo) => void | Promise<void>) | undefined;
  /** Injectable jitter source; defaults to Math.random. */
  random?: (() => number) | undefined;
  /** Deadline of calls that give none, in ms from the call (default DEFAULT_CALL_DEADLINE_MS). */
  defaultDeadlineMs?: number | undefined;
}

/** The typed client of spec sections 4.1 to 4.4 (see CrmApi). */
export function createApiClient(options: ApiClientOptions & ApiClientExtras): ApiClient {
  registerSecret(options.secretKey);
  registerSecret(options.recommendSecretKey);
  const timeouts = withDefaults(DEFAULT_TIMEOUTS, options.timeouts);
  const policy: RetryPolicy = withDefaults(DEFAULT_RETRY_POLICY, options.retry);
  const dispatcher = new Agent({
    // HTTP/1.1 only, as before undici 8 made HTTP/2 its default: a download's backpressure and a
    // body the host closes while it is paused (nodejs/undici#5474) are what the tests prove, over
    // plain-http loopback, where HTTP/2 is never negotiated.
    allowH2: false,
    connect: { timeout: timeouts.connectMs },
    headersTimeout: timeouts.headersMs,
    bodyTimeout: timeouts.bodyMs,
  });
  const now = options.now ?? Date.now;
  const http = {
    dispatcher,
    userAgent: options.userAgent ?? `crm-insights-mcp/${PACKAGE_VERSION}`,
    now,
  };
  const base = trimSlash(options.baseUrl);
  const realtime = trimSlash(options.realtimeBaseUrl);
  const app = encodeURIComponent(options.applicationId);
  const defaultDeadlineMs = options.defaultDeadlineMs ?? DEFAULT_CALL_DEADLINE_MS;
  /** The caller's signal and deadline, the deadline defaulted from the moment of the call. */
  const bounded = (call: CallOptions | undefined) => ({
    signal: call?.signal,
    deadline: call?.deadline ?? Date.now() + defaultDeadlineMs,
  });
  const retrying = <T>(
    operation: RetryInfo["operation"],
    call: { signal: AbortSignal | undefined; deadline: number },
    attempt: () => Promise<T>,
  ) =>
    withRetry(attempt, {
      operation,
      policy,
      signal: call.signal,
      deadline: call.deadline,
      random: options.random,
      onRetry: options.onRetry,
    });

  return {
    recommend(slotKey, body, call) {
      const limits = bounded(call);
      const url = new URL(
        `${realtime}/v1/applications/${app}/slots/${encodeURIComponent(slotKey)}/recommend`,
      );
      return retrying("recommend", limits, () =>
        requestJson(http, {
          operation: "recommend",
          method: "POST",
          url,
          authorization: options.recommendSecretKey,
          body,
          schema: recommendResponseSchema,
          signal: limits.signal,
          deadline: limits.deadline,
        }),
      );
    },

    createExportJob(body, call) {
      const limits = bounded(call);
      const url = new URL(`${base}/prod/v2/applications/${app}/export-jobs`);
      // withRetry only repeats a create whose connection failed before anything was sent.
      return retrying("create_export_job", limits, () =>
        requestJson(http, {
          operation: "create_export_job",
          method: "POST",
          url,
          authorization: options.secretKey,
          body,
          schema: exportJobSchema,
          signal: limits.signal,
          deadline: limits.deadline,
        }),
      );
    },

    getExportJob(jobId, call) {
      const limits = bounded(call);
      const url = new URL(
        `${base}/prod/v2/applications/${app}/export-jobs/${encodeURIComponent(jobId)}`,
      );
      return retrying("get_export_job", limits, () =>
        requestJson(http, {
          operation: "get_export_job",
          method: "GET",
          url,
          authorization: options.secretKey,
          schema: exportJobSchema,
          signal: limits.signal,
          deadline: limits.deadline,
        }),
      );
    },

    campaignMetrics(query: MetricsQuery, call) {
      const limits = bounded(call);
      const url = new URL(`${base}/prod/v2/applications/${app}/campaigns/metrics`);
      url.searchParams.set("task_from", query.task_from);
      url.searchParams.set("task_to", query.task_to);
      if (query.campaign_schedule_type !== undefined) {
        url.searchParams.set("campaign_schedule_type", query.campaign_schedule_type);
      }
      return retrying("campaign_metrics", limits, () =>
        requestJson(http, {
          operation: "campaign_metrics",
          method: "GET",
          url,
          authorization: options.secretKey,
          schema: metricsResponseSchema,
          signal: limits.signal,
          deadline: limits.deadline,
        }),
      );
    },

    downloadExport(job, call) {
      return downloadExport(job, {
        ...http,
        apiHosts: [new URL(base).hostname, new URL(realtime).hostname],
        downloadHosts: options.downloadHosts,
        // The export host hands out the download URLs; only a local one may point at this machine.
        localService: isLoopbackHost(new URL(base).hostname),
        serviceOrigins: [new URL(base).origin, new URL(realtime).origin],
        maxBytes: options.maxDownloadBytes ?? DEFAULT_MAX_DOWNLOAD_BYTES,
        directory: call?.directory ?? join(options.dataDir, "exports"),
        signal: call?.signal,
        deadline: call?.deadline,
        onProgress: call?.onProgress,
      });
    },

    close() {
      return dispatcher.close();
    },
  };
}

/** Spread that ignores explicit `undefined`s and nonsense numbers (an undefined attempt count would loop forever). */
function withDefaults<T extends { [K in keyof T]: number }>(
  defaults: T,
  given: { [K in keyof T]?: number | undefined } | undefined,
): T {
  const merged = { ...defaults };
  for (const key of Object.keys(defaults) as (keyof T)[]) {
    const value = given?.[key];
    if (typeof value === "number" && Number.isFinite(value) && value >= 0) {
      merged[key] = value as T[keyof T];
    }
  }
  return merged;
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, "");
}
