import type {
  CreateExportJobRequest,
  ExportJob,
  MetricsQuery,
  MetricsResponse,
  RecommendRequest,
  RecommendResponse,
} from "./schemas.js";

/** Per-call options every endpoint function accepts. */
export interface CallOptions {
  /** Aborts the call (and its retries) when fired, e.g. by MCP cancellation. */
  signal?: AbortSignal | undefined;
  /** Overall deadline in epoch milliseconds, covering retries and backoff waits. */
  deadline?: number | undefined;
}

export interface DownloadedFile {
  /** Absolute path inside the data directory. */
  path: string;
  bytes: number;
}

export interface DownloadOptions extends CallOptions {
  /** Directory the file is written to (defaults to the client's data directory). */
  directory?: string | undefined;
  /** Called with the bytes written so far as the file arrives (e.g. for progress reports). */
  onProgress?: ((bytes: number) => void) | undefined;
}

/** The typed client of spec sections 4.1 to 4.4; every tool and the CLI go through it. */
export interface CrmApi {
  recommend(
    slotKey: string,
    body: RecommendRequest,
    options?: CallOptions,
  ): Promise<RecommendResponse>;
  /** Never retried once the request may have reached the service. */
  createExportJob(body: CreateExportJobRequest, options?: CallOptions): Promise<ExportJob>;
  getExportJob(jobId: string, options?: CallOptions): Promise<ExportJob>;
  /** One request; the caller splits windows over MAX_METRICS_WINDOW_DAYS (see dates.ts). */
  campaignMetrics(query: MetricsQuery, options?: CallOptions): Promise<MetricsResponse>;
  /** Downloads a completed job's file under the download safety rules. */
  downloadExport(job: ExportJob, options?: DownloadOptions): Promise<DownloadedFile>;
}

export interface ApiClientOptions {
  baseUrl: string;
  realtimeBaseUrl: string;
  applicationId: string;
  secretKey: string;
  recommendSecretKey: string;
  dataDir: string;
  /** Extra hosts a download URL may point to; `undefined` allows any https host. */
  downloadHosts?: string[] | undefined;
  maxDownloadBytes?: number | undefined;
  userAgent?: string | undefined;
  timeouts?: Partial<{ connectMs: number; headersMs: number; bodyMs: number }> | undefined;
  retry?: Partial<{ attempts: number; baseDelayMs: number; maxDelayMs: number }> | undefined;
  /** Clock, injectable for tests of expiry and Retry-After dates. */
  now?: (() => number) | undefined;
}
