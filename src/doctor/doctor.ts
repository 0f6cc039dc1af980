import { randomBytes } from "node:crypto";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DateTime } from "luxon";
import type { CrmApi } from "../api/types.js";
import {
  apiClientOptionsFromConfig,
  type Config,
  ConfigError,
  envText,
  loadConfig,
} from "../config.js";
import { dataFolderInUse, exportsFolder } from "../files/data-folder.js";
import { exportFilesUsage } from "../files/retention.js";
import { formatBytes } from "../format.js";
import { redact, registerSecret } from "../redact.js";
import { PACKAGE_VERSION } from "../version.js";

/**
 * `crm-insights-mcp doctor`: what a new user needs to know before pointing an assistant at the
 * server. Every check reads or probes; none creates an export job (the service allows 10 per
 * 10 minutes) and no key is ever printed.
 */

export interface Check {
  name: "config" | "data folder" | "time zone" | "export/metrics key" | "recommend key";
  ok: boolean;
  detail: string;
}

export interface DoctorReport {
  ok: boolean;
  version: string;
  mode: Config["mode"] | undefined;
  /** The data folder in use (sandbox mode: CRM_DATA_DIR's `sandbox/` part). */
  data_dir: string | undefined;
  checks: Check[];
}

export interface DoctorDeps {
  /** Clock for the time-zone line (tests pin it). */
  now?: () => number;
  /** Per-check deadline for the service probes, in ms. */
  probeTimeoutMs?: number;
}

/** A slot key no console hands out: a 404 for it tells that the key itself was accepted. */
export const PROBE_SLOT_KEY = "crm-insights-mcp-doctor-probe";

export async function runDoctor(
  env: NodeJS.ProcessEnv,
  deps: DoctorDeps = {},
): Promise<DoctorReport> {
  const now = deps.now ?? Date.now;
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return {
      ok: false,
      version: PACKAGE_VERSION,
      mode: undefined,
      data_dir: undefined,
      checks: [{ name: "config", ok: false, detail: error.message }],
    };
  }
  registerSecret(config.secretKey);
  registerSecret(config.recommendSecretKey);

  const recommendKey = recommendKeyVariable(env);
  const checks: Check[] = [
    { name: "config", ok: true, detail: describeConfig(config, recommendKey) },
  ];
  const folder = dataFolderInUse(config);
  checks.push(await checkDataFolder(folder, config));
  checks.push(checkTimeZone(config, env, now()));

  const probeMs = deps.probeTimeoutMs ?? 15_000;
  const service = await connect(config);
  try {
    checks.push(await checkExportKey(service.api, config, service.label, probeMs, now()));
    checks.push(await checkRecommendKey(service.api, service.realtimeLabel, recommendKey, probeMs));
  } finally {
    await service.close();
  }
  return {
    ok: checks.every((c) => c.ok),
    version: PACKAGE_VERSION,
    mode: config.mode,
    data_dir: folder,
    checks: checks.map((c) => ({ ...c, detail: redact(c.detail) })),
  };
}

/** One line per check, `ok` or `FAIL` first, as the contract asks. */
export function renderDoctor(report: DoctorReport): string {
  const lines = report.checks.map((c) => `${c.ok ? "ok  " : "FAIL"}  ${c.name}: ${c.detail}`);
  lines.push(
    report.ok
      ? `All checks passed (crm-insights-mcp ${report.version}).`
      : `Some checks failed (crm-insights-mcp ${report.version}); fix the FAIL lines and run doctor again.`,
  );
  return `${lines.join("\n")}\n`;
}

/**
 * The variable whose key the recommend probe sends: CRM_RECOMMEND_SECRET_KEY, or CRM_SECRET_KEY
 * when it is unset (as config.ts reads it), so a refusal names the key that was really tried.
 */
function recommendKeyVariable(env: NodeJS.ProcessEnv): RecommendKeyVariable {
  return envText(env.CRM_RECOMMEND_SECRET_KEY) === undefined
    ? "CRM_SECRET_KEY"
    : "CRM_RECOMMEND_SECRET_KEY";
}

type RecommendKeyVariable = "CRM_SECRET_KEY" | "CRM_RECOMMEND_SECRET_KEY";

function describeConfig(config: Config, recommendKey: RecommendKeyVariable): string {
  if (config.mode === "sandbox") {
    return "embedded sandbox mode (CRM_BASE_URL unset): synthetic data, no keys needed; set CRM_BASE_URL, CRM_APPLICATION_ID and CRM_SECRET_KEY for the real service.";
  }
  const realtime =
    config.realtimeBaseUrl === config.baseUrl ? "" : `, recommend at ${config.realtimeBaseUrl}`;
  const unset =
    recommendKey === "CRM_SECRET_KEY"
      ? "; CRM_RECOMMEND_SECRET_KEY unset (CRM_SECRET_KEY used for recommend)"
      : "";
  return `remote mode: ${config.baseUrl}${realtime}, application ${config.applicationId}${unset}.`;
}

async function checkDataFolder(folder: string, config: Config): Promise<Check> {
  const probe = join(folder, `.doctor-${randomBytes(6).toString("hex")}`);
  try {
    await mkdir(folder, { recursive: true, mode: 0o700 });
    await writeFile(probe, "probe\n", { mode: 0o600 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    return {
      name: "data folder",
      ok: false,
      detail: `${folder} is not writable (${code}); set CRM_DATA_DIR to a folder you can write to.`,
    };
  } finally {
    await rm(probe, { force: true }).catch(() => undefined);
  }
  const usage = await exportFilesUsage(exportsFolder(folder));
  const { maxAgeDays, maxBytes } = config.retention;
  const limits = [
    maxAgeDays > 0 ? `${maxAgeDays} days` : "no age limit",
    maxBytes > 0 ? `${formatBytes(maxBytes)} in all` : "no size limit",
  ].join(", ");
  const sandboxNote =
    config.mode === "sandbox" ? " (sandbox data, kept apart from real exports)" : "";
  return {
    name: "data folder",
    ok: true,
    detail: `${folder}${sandboxNote} is writable; ${usage.files} export file(s), ${formatBytes(usage.bytes)}; files kept ${limits} (CRM_RETENTION_DAYS, CRM_RETENTION_MB).`,
  };
}

function checkTimeZone(config: Config, env: NodeJS.ProcessEnv, now: number): Check {
  const local = DateTime.fromMillis(now, { zone: config.timeZone });
  const source =
    (env.CRM_TIME_ZONE ?? "").trim() === ""
      ? "the default (set CRM_TIME_ZONE if the application's zone in the service's console differs)"
      : "from CRM_TIME_ZONE";
  if (!local.isValid) {
    return {
      name: "time zone",
      ok: false,
      detail: `${config.timeZone} is not usable here (${local.invalidExplanation ?? "invalid"}); set CRM_TIME_ZONE to an IANA zone such as Asia/Seoul.`,
    };
  }
  return {
    name: "time zone",
    ok: true,
    detail: `${config.timeZone}, ${source}: now ${local.toFormat("yyyy-MM-dd HH:mm")} (UTC${local.toFormat("ZZ")}); export dates are read as days in this zone.`,
  };
}

interface Service {
  api: CrmApi;
  label: string;
  realtimeLabel: string;
  close(): Promise<void>;
}

async function connect(config: Config): Promise<Service> {
  const [{ createApiClient }] = await Promise.all([import("../api/client.js")]);
  // One attempt, short timeouts: doctor reports a slow or absent service instead of waiting out
  // the retries a tool call would make.
  const tuning = {
    retry: { attempts: 1 },
    timeouts: { connectMs: 5000, headersMs: 10_000, bodyMs: 10_000 },
  };
  if (config.mode === "remote") {
    const api = createApiClient(apiClientOptionsFromConfig(config, tuning));
    return {
      api,
      label: config.baseUrl ?? "",
      realtimeLabel: config.realtimeBaseUrl ?? config.baseUrl ?? "",
      close: () => api.close(),
    };
  }
  const { startEmbeddedSandbox } = await import("../sandbox/embedded.js");
  const embedded = await startEmbeddedSandbox(config);
  return {
    api: embedded.api,
    label: `the embedded sandbox (${embedded.sandbox.base_url})`,
    realtimeLabel: `the embedded sandbox (${embedded.sandbox.realtime_base_url})`,
    close: () => embedded.close(),
  };
}

async function checkExportKey(
  api: CrmApi,
  config: Config,
  label: string,
  timeoutMs: number,
  now: number,
): Promise<Check> {
  // A one-day metrics read: it proves the key, the application ID and the route, and unlike a
  // create it does not spend the export budget.
  const day = DateTime.fromMillis(now, { zone: "Asia/Seoul" }).toISODate() ?? "";
  try {
    const answer = await api.campaignMetrics(
      { task_from: day, task_to: day },
      { deadline: Date.now() + timeoutMs },
    );
    return {
      name: "export/metrics key",
      ok: true,
      detail: `${label} accepted ${config.mode === "remote" ? `CRM_SECRET_KEY for application ${config.applicationId}` : "its own key"} (campaign metrics of ${day}: ${answer.campaigns.length} campaign(s)).`,
    };
  } catch (error) {
    return {
      name: "export/metrics key",
      ok: false,
      detail: explainFailure(error, label, { which: "export", variable: "CRM_SECRET_KEY" }),
    };
  }
}

async function checkRecommendKey(
  api: CrmApi,
  label: string,
  variable: RecommendKeyVariable,
  timeoutMs: number,
): Promise<Check> {
  try {
    await api.recommend(PROBE_SLOT_KEY, { limit: 1 }, { deadline: Date.now() + timeoutMs });
    return { name: "recommend key", ok: true, detail: `${label} accepted the recommend key.` };
  } catch (error) {
    const kind = (error as { kind?: unknown }).kind;
    // The probe slot does not exist: 404 (or a temporary slot state) after the key passed. The
    // spec does not say whether the service checks the key before the slot; the sandbox does.
    if (kind === "not_found" || kind === "cache_not_ready" || kind === "engine_error") {
      return {
        name: "recommend key",
        ok: true,
        detail: `${label} did not refuse the recommend key (a probe slot answered "no such slot", not "authentication failed").`,
      };
    }
    return {
      name: "recommend key",
      ok: false,
      detail: explainFailure(error, label, { which: "recommend", variable }),
    };
  }
}

function explainFailure(
  error: unknown,
  label: string,
  key: { which: "export" | "recommend"; variable: RecommendKeyVariable },
): string {
  const kind = (error as { kind?: unknown }).kind;
  // Quoted inside a sentence of ours: without its closing period.
  const message = (error instanceof Error ? error.message : String(error)).replace(/\.$/, "");
  const { which, variable } = key;
  switch (kind) {
    case "authentication": {
      const check =
        which === "export"
          ? " and that it belongs to CRM_APPLICATION_ID (export and metrics take the key from the account manager)"
          : variable === "CRM_SECRET_KEY"
            ? ". CRM_RECOMMEND_SECRET_KEY is unset, so recommend was tried with CRM_SECRET_KEY; if recommend takes the application's own secret key, set CRM_RECOMMEND_SECRET_KEY to it"
            : " (the application's secret key; it defaults to CRM_SECRET_KEY)";
      return `${label} refused the key in ${variable}${which === "recommend" ? " for recommend" : ""} (authentication failed). Check that the whole key was copied${check}.`;
    }
    case "not_found":
      return `${label} does not know the application: check CRM_APPLICATION_ID.`;
    case "network":
    case "timeout":
      return `could not reach ${label} (${message}). Check the URL (${which === "export" ? "CRM_BASE_URL" : "CRM_REALTIME_BASE_URL"}), the network and any proxy.`;
    default:
      return `${label} answered with an error: ${message}`;
  }
}
