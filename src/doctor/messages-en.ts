import { formatBytes } from "../format.js";

/**
 * doctor's words in English, the default of its text and always the words of its JSON (whose
 * `detail`s scripts may read). messages-ko.ts has the same keys. Values (paths, URLs, IDs, the
 * service's own error text) come in as they are.
 */

export type CheckName =
  | "config"
  | "data folder"
  | "readable folders"
  | "time zone"
  | "export/metrics key"
  | "recommend key";

export type KeyVariable = "CRM_SECRET_KEY" | "CRM_RECOMMEND_SECRET_KEY";

export const doctorEn = {
  /** A check's name on its line (the JSON keeps the English name). */
  names: {
    config: "config",
    "data folder": "data folder",
    "readable folders": "readable folders",
    "time zone": "time zone",
    "export/metrics key": "export/metrics key",
    "recommend key": "recommend key",
  } satisfies Record<CheckName, string>,
  /** One line per check, `ok` or `FAIL` first, as the contract asks. */
  line: (ok: boolean, name: string, detail: string) =>
    `${ok ? "ok  " : "FAIL"}  ${name}: ${detail}`,
  allPassed: (version: string) => `All checks passed (crm-insights-mcp ${version}).`,
  someFailed: (version: string) =>
    `Some checks failed (crm-insights-mcp ${version}); fix the FAIL lines and run doctor again.`,
  sandboxMode:
    "embedded sandbox mode (CRM_BASE_URL unset): synthetic data, no keys needed; set CRM_BASE_URL, CRM_APPLICATION_ID and CRM_SECRET_KEY for the real service.",
  remoteMode: (
    baseUrl: string,
    realtime: string | undefined,
    app: string,
    recommendUnset: boolean,
  ) =>
    `remote mode: ${baseUrl}${realtime === undefined ? "" : `, recommend at ${realtime}`}, application ${app}${recommendUnset ? "; CRM_RECOMMEND_SECRET_KEY unset (CRM_SECRET_KEY used for recommend)" : ""}.`,
  notWritable: (folder: string, code: string) =>
    `${folder} is not writable (${code}); set CRM_DATA_DIR to a folder you can write to.`,
  writable: (
    folder: string,
    sandbox: boolean,
    usage: { files: number; bytes: number },
    limits: { maxAgeDays: number; maxBytes: number },
  ) => {
    const kept = [
      limits.maxAgeDays > 0 ? `${limits.maxAgeDays} days` : "no age limit",
      limits.maxBytes > 0 ? `${formatBytes(limits.maxBytes)} in all` : "no size limit",
    ].join(", ");
    const apart = sandbox ? " (sandbox data, kept apart from real exports)" : "";
    return `${folder}${apart} is writable; ${usage.files} export file(s), ${formatBytes(usage.bytes)}; files kept ${kept} (CRM_RETENTION_DAYS, CRM_RETENTION_MB).`;
  },
  readableFolders: (dataFolder: string, readDirs: readonly string[], roots: boolean) => {
    const where =
      readDirs.length === 0
        ? `the data folder only (${dataFolder}); to read another folder, such as Downloads, add it to CRM_READ_DIRS (absolute folders, comma-separated)`
        : `the data folder (${dataFolder}) and ${readDirs.join(", ")} (CRM_READ_DIRS)`;
    const clientRoots = roots
      ? "; over stdio also the folders the client offers as MCP roots (CRM_READ_ROOTS), never over HTTP"
      : "";
    return `summarize_export and query_export read files in ${where}${clientRoots}.`;
  },
  readDirUnreadable: (folder: string, code: string) =>
    `${folder} (CRM_READ_DIRS) cannot be read (${code}); fix its permissions or remove it from CRM_READ_DIRS.`,
  zoneByDefault:
    "the default (set CRM_TIME_ZONE if the application's zone in the service's console differs)",
  zoneFromEnv: "from CRM_TIME_ZONE",
  zoneUnusable: (zone: string, why: string) =>
    `${zone} is not usable here (${why}); set CRM_TIME_ZONE to an IANA zone such as Asia/Seoul.`,
  invalid: "invalid",
  zoneOk: (zone: string, source: string, now: string, offset: string) =>
    `${zone}, ${source}: now ${now} (UTC${offset}); export dates are read as days in this zone.`,
  embeddedSandbox: (url: string) => `the embedded sandbox (${url})`,
  exportKeyOk: (label: string, app: string | undefined, day: string, campaigns: number) =>
    `${label} accepted ${app === undefined ? "its own key" : `CRM_SECRET_KEY for application ${app}`} (campaign metrics of ${day}: ${campaigns} campaign(s)).`,
  recommendKeyOk: (label: string) => `${label} accepted the recommend key.`,
  recommendKeyNotRefused: (label: string) =>
    `${label} did not refuse the recommend key (a probe slot answered "no such slot", not "authentication failed").`,
  refused: (label: string, variable: KeyVariable, which: "export" | "recommend") => {
    const check =
      which === "export"
        ? " and that it belongs to CRM_APPLICATION_ID (export and metrics take the key from the account manager)"
        : variable === "CRM_SECRET_KEY"
          ? ". CRM_RECOMMEND_SECRET_KEY is unset, so recommend was tried with CRM_SECRET_KEY; if recommend takes the application's own secret key, set CRM_RECOMMEND_SECRET_KEY to it"
          : " (the application's secret key; it defaults to CRM_SECRET_KEY)";
    return `${label} refused the key in ${variable}${which === "recommend" ? " for recommend" : ""} (authentication failed). Check that the whole key was copied${check}.`;
  },
  unknownApplication: (label: string) =>
    `${label} does not know the application: check CRM_APPLICATION_ID.`,
  unreachable: (label: string, message: string, variable: string) =>
    `could not reach ${label} (${message}). Check the URL (${variable}), the network and any proxy.`,
  answeredError: (label: string, message: string) => `${label} answered with an error: ${message}`,
};

export type DoctorMessages = typeof doctorEn;
