import { randomBytes } from "node:crypto";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DateTime } from "luxon";
import type { Lang } from "../analysis/i18n/lang.js";
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
import { redact, registerSecret } from "../redact.js";
import { PACKAGE_VERSION } from "../version.js";
import { type CheckName, type DoctorMessages, doctorEn, type KeyVariable } from "./messages-en.js";
import { doctorKo } from "./messages-ko.js";
import { checkReadableFolders } from "./readable-folders.js";

/**
 * `crm-insights-mcp doctor`: what a new user needs to know before pointing an assistant at the
 * server. Every check reads or probes; none creates an export job (the service allows only a
 * few per window: EXPORT_CREATE_LIMIT) and no key is ever printed.
 */

export interface Check {
  name: CheckName;
  ok: boolean;
  detail: string;
}

/** doctor's words in each language; the JSON is always written with the English ones. */
export const DOCTOR_CATALOGUES: Record<Lang, DoctorMessages> = { en: doctorEn, ko: doctorKo };

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
  /** The language of the details: English (the default, and always for --json) or Korean. */
  lang?: Lang;
}

/** A slot key no console hands out: a 404 for it tells that the key itself was accepted. */
export const PROBE_SLOT_KEY = "crm-insights-mcp-doctor-probe";

export async function runDoctor(
  env: NodeJS.ProcessEnv,
  deps: DoctorDeps = {},
): Promise<DoctorReport> {
  const now = deps.now ?? Date.now;
  const m = DOCTOR_CATALOGUES[deps.lang ?? "en"];
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
    { name: "config", ok: true, detail: describeConfig(config, recommendKey, m) },
  ];
  const folder = dataFolderInUse(config);
  checks.push(await checkDataFolder(folder, config, m));
  checks.push(await checkReadableFolders(config, m));
  checks.push(checkTimeZone(config, env, now(), m));

  const probeMs = deps.probeTimeoutMs ?? 15_000;
  const service = await connect(config, m);
  try {
    checks.push(await checkExportKey(service.api, config, service.label, probeMs, now(), m));
    checks.push(
      await checkRecommendKey(service.api, service.realtimeLabel, recommendKey, probeMs, m),
    );
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

/**
 * One line per check, its outcome first, as the contract asks; in `lang`, which should be the
 * language the report's details were written in (runDoctor's `lang`).
 */
export function renderDoctor(report: DoctorReport, lang: Lang = "en"): string {
  const m = DOCTOR_CATALOGUES[lang];
  const lines = report.checks.map((c) => m.line(c.ok, m.names[c.name], c.detail));
  lines.push(report.ok ? m.allPassed(report.version) : m.someFailed(report.version));
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

type RecommendKeyVariable = KeyVariable;

function describeConfig(
  config: Config,
  recommendKey: RecommendKeyVariable,
  m: DoctorMessages,
): string {
  if (config.mode === "sandbox") return m.sandboxMode;
  return m.remoteMode(
    config.baseUrl ?? "",
    config.realtimeBaseUrl === config.baseUrl ? undefined : (config.realtimeBaseUrl ?? ""),
    config.applicationId ?? "",
    recommendKey === "CRM_SECRET_KEY",
  );
}

async function checkDataFolder(folder: string, config: Config, m: DoctorMessages): Promise<Check> {
  const probe = join(folder, `.doctor-${randomBytes(6).toString("hex")}`);
  try {
    await mkdir(folder, { recursive: true, mode: 0o700 });
    await writeFile(probe, "probe\n", { mode: 0o600 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    return {
      name: "data folder",
      ok: false,
      detail: m.notWritable(folder, code),
    };
  } finally {
    await rm(probe, { force: true }).catch(() => undefined);
  }
  const usage = await exportFilesUsage(exportsFolder(folder));
  return {
    name: "data folder",
    ok: true,
    detail: m.writable(folder, config.mode === "sandbox", usage, config.retention),
  };
}

function checkTimeZone(
  config: Config,
  env: NodeJS.ProcessEnv,
  now: number,
  m: DoctorMessages,
): Check {
  const local = DateTime.fromMillis(now, { zone: config.timeZone });
  const source = (env.CRM_TIME_ZONE ?? "").trim() === "" ? m.zoneByDefault : m.zoneFromEnv;
  if (!local.isValid) {
    return {
      name: "time zone",
      ok: false,
      detail: m.zoneUnusable(config.timeZone, local.invalidExplanation ?? m.invalid),
    };
  }
  return {
    name: "time zone",
    ok: true,
    detail: m.zoneOk(
      config.timeZone,
      source,
      local.toFormat("yyyy-MM-dd HH:mm"),
      local.toFormat("ZZ"),
    ),
  };
}

interface Service {
  api: CrmApi;
  label: string;
  realtimeLabel: string;
  close(): Promise<void>;
}

async function connect(config: Config, m: DoctorMessages): Promise<Service> {
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
    label: m.embeddedSandbox(embedded.sandbox.base_url),
    realtimeLabel: m.embeddedSandbox(embedded.sandbox.realtime_base_url),
    close: () => embedded.close(),
  };
}

async function checkExportKey(
  api: CrmApi,
  config: Config,
  label: string,
  timeoutMs: number,
  now: number,
  m: DoctorMessages,
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
      detail: m.exportKeyOk(
        label,
        config.mode === "remote" ? (config.applicationId ?? "") : undefined,
        day,
        answer.campaigns.length,
      ),
    };
  } catch (error) {
    return {
      name: "export/metrics key",
      ok: false,
      detail: explainFailure(error, label, { which: "export", variable: "CRM_SECRET_KEY" }, m),
    };
  }
}

async function checkRecommendKey(
  api: CrmApi,
  label: string,
  variable: RecommendKeyVariable,
  timeoutMs: number,
  m: DoctorMessages,
): Promise<Check> {
  try {
    await api.recommend(PROBE_SLOT_KEY, { limit: 1 }, { deadline: Date.now() + timeoutMs });
    return { name: "recommend key", ok: true, detail: m.recommendKeyOk(label) };
  } catch (error) {
    const kind = (error as { kind?: unknown }).kind;
    // The probe slot does not exist: 404 (or a temporary slot state) after the key passed. The
    // spec does not say whether the service checks the key before the slot; the sandbox does.
    if (kind === "not_found" || kind === "cache_not_ready" || kind === "engine_error") {
      return {
        name: "recommend key",
        ok: true,
        detail: m.recommendKeyNotRefused(label),
      };
    }
    return {
      name: "recommend key",
      ok: false,
      detail: explainFailure(error, label, { which: "recommend", variable }, m),
    };
  }
}

function explainFailure(
  error: unknown,
  label: string,
  key: { which: "export" | "recommend"; variable: RecommendKeyVariable },
  m: DoctorMessages,
): string {
  const kind = (error as { kind?: unknown }).kind;
  // Quoted inside a sentence of ours: without its closing period.
  const message = (error instanceof Error ? error.message : String(error)).replace(/\.$/, "");
  const { which, variable } = key;
  switch (kind) {
    case "authentication":
      return m.refused(label, variable, which);
    case "not_found":
      return m.unknownApplication(label);
    case "network":
    case "timeout":
      return m.unreachable(
        label,
        message,
        which === "export" ? "CRM_BASE_URL" : "CRM_REALTIME_BASE_URL",
      );
    default:
      return m.answeredError(label, message);
  }
}
