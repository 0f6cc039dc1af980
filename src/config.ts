import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import type { z } from "zod";
import {
  EXPORT_CREATE_LIMIT,
  EXPORT_CREATE_WINDOW_SECONDS,
  MIN_POLL_INTERVAL_SECONDS,
} from "./api/limits.js";
import type { ApiClientOptions } from "./api/types.js";
import {
  boundedInteger,
  budgetSchema,
  DEFAULT_RESULT_TOKENS,
  databaseUrlSchema,
  historySwitchSchema,
  hostList,
  integer,
  logLevelSchema,
  nonNegativeNumber,
  onOffSwitch,
  optionalIsoDateTime,
  optionalKey,
  optionalText,
  optionalUrl,
  positiveNumber,
  readDirList,
  resultTokensSchema,
  timeZoneSchema,
} from "./config-values.js";
import type { LogLevel } from "./log.js";
import { isLoopbackHost } from "./loopback-host.js";
import { blankToUndefined } from "./text-input.js";

/**
 * The server's configuration, parsed once from the environment. Every variable of the contract
 * has a field here; nothing else reads `process.env`.
 */
export interface Config {
  /** `sandbox`: CRM_BASE_URL unset, the embedded sandbox answers on a loopback port. */
  mode: "sandbox" | "remote";
  /** `{base_url}` of the export and metrics endpoints, no trailing slash. Unset in sandbox mode. */
  baseUrl: string | undefined;
  /** `{realtime_base_url}` of the recommend endpoint, no trailing slash. Unset in sandbox mode. */
  realtimeBaseUrl: string | undefined;
  applicationId: string | undefined;
  secretKey: string | undefined;
  recommendSecretKey: string | undefined;
  timeZone: string;
  dataDir: string;
  /** Hosts a download URL may point to besides the API hosts; `undefined` means any https host. */
  downloadHosts: string[] | undefined;
  pollIntervalSeconds: number;
  exportBudget: { count: number; windowSeconds: number };
  /** Optional product catalog (CSV or JSON) used to put names and prices next to recommended IDs. */
  productCatalogPath: string | undefined;
  /** Largest export file we download, in bytes. */
  maxDownloadBytes: number;
  sandbox: { seed: number; now: string | undefined; jobSeconds: number };
  /** CRM_LOG_LEVEL: the least severe level written to stderr. */
  logLevel: LogLevel;
  /**
   * CRM_DATABASE_URL: the export-job ledger and budget live in this PostgreSQL database, shared
   * by every server process using it (team mode); unset, they are files in the data folder.
   */
  databaseUrl: string | undefined;
  /** CRM_RESULT_MAX_TOKENS: the budget of a tool result's structuredContent (estimated tokens). */
  resultMaxTokens: number;
  /**
   * CRM_METRICS_CALL_SECONDS: how long one campaign_metrics call may spend on its requests
   * together (a window over 180 days takes several), retries and waits included.
   */
  metricsCallSeconds: number;
  /**
   * How long downloaded export files are kept (CRM_RETENTION_DAYS) and how much room they may
   * take together (CRM_RETENTION_MB); 0 turns a limit off.
   */
  retention: { maxAgeDays: number; maxBytes: number };
  /** The SQL engine of query_export (CRM_QUERY_MEMORY_MB, CRM_QUERY_THREADS, CRM_QUERY_TIMEOUT_SECONDS). */
  query: QueryLimits;
  /**
   * CRM_READ_DIRS: folders (absolute, existing at start-up) whose files summarize_export and
   * query_export may read besides the data folder's, by the same rule (files/export-path.ts).
   */
  readDirs: string[];
  /** CRM_READ_ROOTS: over stdio, the folders the client offers as MCP roots are readable too. */
  readRoots: boolean;
  /** CRM_HISTORY (`off`: no history) and CRM_HISTORY_DAYS (days of send rounds kept). */
  history: HistorySettings;
}

export interface HistorySettings {
  enabled: boolean;
  keepDays: number;
}

const DEFAULT_HISTORY_DAYS = 400;

/** Up to 100 years: a bound only against a typo's extra digits. */
function readHistorySettings(read: EnvRead): HistorySettings {
  const switched = read("CRM_HISTORY", historySwitchSchema, "off") ?? "on";
  return {
    enabled: switched === "on",
    keepDays:
      read("CRM_HISTORY_DAYS", boundedInteger(1, 36_500), String(DEFAULT_HISTORY_DAYS)) ??
      DEFAULT_HISTORY_DAYS,
  };
}

/** What one query_export statement may use: DuckDB's memory limit and threads, and its time. */
export interface QueryLimits {
  memoryMb: number;
  threads: number;
  timeoutSeconds: number;
}

const DEFAULT_QUERY_LIMITS: QueryLimits = { memoryMb: 1024, threads: 2, timeoutSeconds: 60 };

/** Below 128 MB DuckDB spills even small aggregates; past 10 minutes a chat has moved on. */
function readQueryLimits(read: EnvRead): QueryLimits {
  const d = DEFAULT_QUERY_LIMITS;
  return {
    memoryMb: read("CRM_QUERY_MEMORY_MB", boundedInteger(128, 1_048_576), "1024") ?? d.memoryMb,
    threads: read("CRM_QUERY_THREADS", boundedInteger(1, 256), "2") ?? d.threads,
    timeoutSeconds:
      read("CRM_QUERY_TIMEOUT_SECONDS", boundedInteger(1, 600), "60") ?? d.timeoutSeconds,
  };
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

export interface ConfigContext {
  /** Home directory used for the default data folder (injectable so the function stays pure). */
  homeDir?: string;
  platform?: NodeJS.Platform;
}

const DEFAULT_POLL_SECONDS = MIN_POLL_INTERVAL_SECONDS;
/**
 * campaign_metrics' bound for all of a call's requests: MCP clients commonly wait 60-120 s for a
 * tool, and seven 180-day requests (the longest window) normally take a few seconds.
 */
export const DEFAULT_METRICS_CALL_SECONDS = 90;
const DEFAULT_MAX_DOWNLOAD_MB = 2048;
const DEFAULT_RETENTION_DAYS = 30;
const DEFAULT_RETENTION_MB = 4096;
/** An example key that the key rules accept, for error messages (a placeholder would be refused). */
const EXAMPLE_KEY = "3a7f9c1e5b2d8f4a6e0b";

type EnvRead = <T>(name: string, schema: z.ZodType<T>, example: string) => T | undefined;

/** Reads one variable; a bad value adds a line naming it and a good example to `problems`. */
function envReader(env: NodeJS.ProcessEnv, problems: string[]): EnvRead {
  return <T>(name: string, schema: z.ZodType<T>, example: string): T | undefined => {
    const raw = envText(env[name]);
    const parsed = schema.safeParse(raw);
    if (parsed.success) return parsed.data;
    const why = parsed.error.issues[0]?.message ?? "invalid value";
    problems.push(`${name}: ${why}. Example of a good value: ${name}=${example}`);
    return undefined;
  };
}

/** What an analysis of an export file needs: the app's zone and the file-size cap. */
export type AnalysisSettings = Pick<Config, "timeZone" | "maxDownloadBytes">;

function readAnalysisSettings(read: EnvRead): AnalysisSettings {
  const timeZone = read("CRM_TIME_ZONE", timeZoneSchema, "Asia/Seoul") ?? "Asia/Seoul";
  const maxDownloadMb =
    read("CRM_MAX_DOWNLOAD_MB", positiveNumber, "2048") ?? DEFAULT_MAX_DOWNLOAD_MB;
  return { timeZone, maxDownloadBytes: Math.floor(maxDownloadMb * 1024 * 1024) };
}

/**
 * The settings the `summarize` command shares with the server, checked the same way. Only these
 * are read: a local analysis needs none of the service's variables.
 */
export function loadAnalysisSettings(env: NodeJS.ProcessEnv): AnalysisSettings {
  const problems: string[] = [];
  const settings = readAnalysisSettings(envReader(env, problems));
  if (problems.length > 0) {
    throw new ConfigError(`Invalid configuration:\n- ${problems.join("\n- ")}`);
  }
  return settings;
}

/**
 * What the `query` command needs: the analysis settings, the query engine's limits and the
 * history's settings (`query --history`).
 */
export function loadQuerySettings(
  env: NodeJS.ProcessEnv,
): AnalysisSettings & { query: QueryLimits; history: HistorySettings } {
  const problems: string[] = [];
  const read = envReader(env, problems);
  const settings = {
    ...readAnalysisSettings(read),
    query: readQueryLimits(read),
    history: readHistorySettings(read),
  };
  if (problems.length > 0) {
    throw new ConfigError(`Invalid configuration:\n- ${problems.join("\n- ")}`);
  }
  return settings;
}

/** Reads the whole configuration or throws a ConfigError that lists every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv, context: ConfigContext = {}): Config {
  const problems: string[] = [];
  const read = envReader(env, problems);

  const baseUrl = read("CRM_BASE_URL", optionalUrl, "https://api.example.com");
  const realtimeBaseUrl = read(
    "CRM_REALTIME_BASE_URL",
    optionalUrl,
    "https://realtime.example.com",
  );
  const mode = envText(env.CRM_BASE_URL) === undefined ? "sandbox" : "remote";

  const applicationId = read("CRM_APPLICATION_ID", optionalText, "my-application-id");
  const secretKey = read("CRM_SECRET_KEY", optionalKey, EXAMPLE_KEY);
  const recommendSecretKey = read("CRM_RECOMMEND_SECRET_KEY", optionalKey, EXAMPLE_KEY);
  if (mode === "remote") {
    if (applicationId === undefined && !hasProblem(problems, "CRM_APPLICATION_ID")) {
      problems.push(
        "CRM_APPLICATION_ID: required when CRM_BASE_URL is set. Example of a good value: CRM_APPLICATION_ID=my-application-id",
      );
    }
    if (secretKey === undefined && !hasProblem(problems, "CRM_SECRET_KEY")) {
      problems.push(
        `CRM_SECRET_KEY: required when CRM_BASE_URL is set (the secret key the service's account manager issued). Example of a good value: CRM_SECRET_KEY=${EXAMPLE_KEY}`,
      );
    }
  } else if (realtimeBaseUrl !== undefined) {
    problems.push(
      "CRM_REALTIME_BASE_URL: set without CRM_BASE_URL; set both (or neither, for the embedded sandbox). Example of a good value: CRM_BASE_URL=https://api.example.com",
    );
  }

  const { timeZone, maxDownloadBytes } = readAnalysisSettings(read);
  const dataDirInput = read("CRM_DATA_DIR", optionalText, "/home/me/.local/share/crm-insights-mcp");
  const dataDir =
    dataDirInput === undefined
      ? defaultDataDir(env, context)
      : absoluteDataDir(dataDirInput, context, problems);
  const downloadHosts = read("CRM_DOWNLOAD_HOSTS", hostList, "files.example.com,cdn.example.com");

  const pollIntervalSeconds =
    read("CRM_POLL_INTERVAL_SECONDS", positiveNumber, "5") ?? DEFAULT_POLL_SECONDS;
  if (pollIntervalSeconds < MIN_POLL_INTERVAL_SECONDS && mode === "remote") {
    const hosts = [baseUrl, realtimeBaseUrl].filter((u): u is string => u !== undefined);
    if (!hosts.every((u) => isLoopbackHost(new URL(u).hostname))) {
      problems.push(
        `CRM_POLL_INTERVAL_SECONDS: ${pollIntervalSeconds} is below the service's ${MIN_POLL_INTERVAL_SECONDS}-second minimum polling interval (only loopback API hosts may be polled faster). Example of a good value: CRM_POLL_INTERVAL_SECONDS=5`,
      );
    }
  }

  const exportBudget = read(
    "CRM_EXPORT_BUDGET",
    budgetSchema,
    `${EXPORT_CREATE_LIMIT}/${EXPORT_CREATE_WINDOW_SECONDS}`,
  ) ?? { count: EXPORT_CREATE_LIMIT, windowSeconds: EXPORT_CREATE_WINDOW_SECONDS };
  const productCatalogPath = read("CRM_PRODUCT_CATALOG", optionalText, "/data/products.csv");
  const seed = read("CRM_SANDBOX_SEED", integer, "42") ?? 42;
  const now = read("CRM_SANDBOX_NOW", optionalIsoDateTime, "2026-11-22T09:00:00+09:00");
  const jobSeconds = read("CRM_SANDBOX_JOB_SECONDS", nonNegativeNumber, "3") ?? 3;
  const logLevel = read("CRM_LOG_LEVEL", logLevelSchema, "info") ?? "info";
  const resultMaxTokens =
    read("CRM_RESULT_MAX_TOKENS", resultTokensSchema, String(DEFAULT_RESULT_TOKENS)) ??
    DEFAULT_RESULT_TOKENS;
  const metricsCallSeconds =
    read("CRM_METRICS_CALL_SECONDS", positiveNumber, String(DEFAULT_METRICS_CALL_SECONDS)) ??
    DEFAULT_METRICS_CALL_SECONDS;
  const retentionDays =
    read("CRM_RETENTION_DAYS", nonNegativeNumber, "30") ?? DEFAULT_RETENTION_DAYS;
  const retentionMb = read("CRM_RETENTION_MB", nonNegativeNumber, "4096") ?? DEFAULT_RETENTION_MB;
  const query = readQueryLimits(read);
  const readDirs =
    read("CRM_READ_DIRS", readDirList(context.homeDir ?? homedir()), "/home/me/Downloads") ?? [];
  const readRoots = read("CRM_READ_ROOTS", onOffSwitch, "1") ?? false;
  const history = readHistorySettings(read);
  const databaseUrl = read(
    "CRM_DATABASE_URL",
    databaseUrlSchema,
    "postgres://crm:password@db.internal:5432/crm",
  );

  if (problems.length > 0) {
    throw new ConfigError(`Invalid configuration:\n- ${problems.join("\n- ")}`);
  }
  return {
    mode,
    baseUrl,
    realtimeBaseUrl: mode === "remote" ? (realtimeBaseUrl ?? baseUrl) : undefined,
    applicationId,
    secretKey,
    recommendSecretKey: recommendSecretKey ?? secretKey,
    timeZone,
    dataDir,
    downloadHosts,
    pollIntervalSeconds,
    exportBudget,
    productCatalogPath,
    maxDownloadBytes,
    sandbox: { seed, now, jobSeconds },
    logLevel,
    resultMaxTokens,
    metricsCallSeconds,
    retention: { maxAgeDays: retentionDays, maxBytes: Math.floor(retentionMb * 1024 * 1024) },
    databaseUrl,
    query,
    readDirs,
    readRoots,
    history,
  };
}

/** The per-user data folder, following each platform's convention. */
export function defaultDataDir(env: NodeJS.ProcessEnv, context: ConfigContext = {}): string {
  const home = context.homeDir ?? homedir();
  const platform = context.platform ?? process.platform;
  if (platform === "win32") {
    return join(env.LOCALAPPDATA ?? join(home, "AppData", "Local"), "crm-insights-mcp");
  }
  if (platform === "darwin") {
    return join(home, "Library", "Application Support", "crm-insights-mcp");
  }
  return join(
    blankToUndefined(env.XDG_DATA_HOME) ?? join(home, ".local", "share"),
    "crm-insights-mcp",
  );
}

/**
 * A relative data folder would follow whatever directory the assistant happens to start us in,
 * so only absolute paths (or `~/...`) are accepted.
 */
function absoluteDataDir(value: string, context: ConfigContext, problems: string[]): string {
  const expanded =
    value === "~" || value.startsWith("~/")
      ? join(context.homeDir ?? homedir(), value.slice(1))
      : value;
  if (!isAbsolute(expanded)) {
    problems.push(
      `CRM_DATA_DIR: "${value}" is a relative path; give an absolute path. Example of a good value: CRM_DATA_DIR=/home/me/.local/share/crm-insights-mcp`,
    );
  }
  return expanded;
}

/**
 * An environment variable's value: blank is unset, and so is an MCP Bundle host's placeholder
 * for an optional field the user left empty (`${user_config.base_url}`), which some hosts pass
 * through literally instead of "".
 */
export function envText(value: string | undefined): string | undefined {
  const text = blankToUndefined(value);
  return text !== undefined && /^\$\{user_config\.[A-Za-z0-9_]+\}$/.test(text) ? undefined : text;
}

function hasProblem(problems: string[], name: string): boolean {
  return problems.some((p) => p.startsWith(`${name}:`));
}

/**
 * Client options for remote mode from the parsed config. In sandbox mode the server passes the
 * sandbox's URLs and keys as `overrides` (anything missing there is a ConfigError).
 */
export function apiClientOptionsFromConfig(
  config: Config,
  overrides: Partial<ApiClientOptions> = {},
): ApiClientOptions {
  const need = (value: string | undefined, variable: string): string => {
    if (value !== undefined && value !== "") return value;
    throw new ConfigError(
      config.mode === "sandbox"
        ? `${variable} is not available: the embedded sandbox must provide it.`
        : `${variable} is required when CRM_BASE_URL is set.`,
    );
  };
  const baseUrl = need(overrides.baseUrl ?? config.baseUrl, "CRM_BASE_URL");
  return {
    baseUrl,
    realtimeBaseUrl: overrides.realtimeBaseUrl ?? config.realtimeBaseUrl ?? baseUrl,
    applicationId: need(overrides.applicationId ?? config.applicationId, "CRM_APPLICATION_ID"),
    secretKey: need(overrides.secretKey ?? config.secretKey, "CRM_SECRET_KEY"),
    recommendSecretKey: need(
      overrides.recommendSecretKey ??
        config.recommendSecretKey ??
        overrides.secretKey ??
        config.secretKey,
      "CRM_RECOMMEND_SECRET_KEY",
    ),
    dataDir: overrides.dataDir ?? config.dataDir,
    downloadHosts: "downloadHosts" in overrides ? overrides.downloadHosts : config.downloadHosts,
    maxDownloadBytes: overrides.maxDownloadBytes ?? config.maxDownloadBytes,
    userAgent: overrides.userAgent,
    timeouts: overrides.timeouts,
    retry: overrides.retry,
    now: overrides.now,
  };
}
