import { userInfo } from "node:os";
import { type Config, ConfigError, loadConfig } from "../config.js";
import type { ExportRuntime } from "../exports/export-call.js";
import { formatCount } from "../format.js";
import { databasePassword } from "../ledger/postgres-url.js";
import { log, setLogLevel } from "../log.js";
import type { ToolRuntime } from "../mcp/tool.js";
import { redact, registerSecret } from "../redact.js";
import { barProgress, lineProgress, type SyncProgress } from "./progress.js";
import { runSync, type SyncReport } from "./run.js";
import { describeWindow, resolveSyncWindow, SyncUsageError } from "./window.js";

export const SYNC_USAGE =
  "Usage: crm-insights-mcp sync [--since 30d|DATE] [--until DATE] [--campaign ID]... [--json]\n";

export interface SyncArgs {
  since?: string | undefined;
  until?: string | undefined;
  campaigns: string[];
  json: boolean;
}

/** The flags, or a SyncUsageError naming the flag and the form it takes. */
export function parseSyncArgs(args: readonly string[]): SyncArgs {
  const parsed: SyncArgs = { campaigns: [], json: false };
  const forms: Record<string, string> = {
    "--since": "a number of days such as 30d, a date YYYY-MM-DD or an ISO 8601 date-time",
    "--until": "a date YYYY-MM-DD or an ISO 8601 date-time",
    "--campaign": "a campaign ID (campaign_metrics' _id), e.g. --campaign cmp_123",
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--json") {
      parsed.json = true;
      continue;
    }
    const eq = arg.indexOf("=");
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const form = forms[flag];
    if (form === undefined) {
      throw new SyncUsageError(
        `unknown argument "${arg}"; the flags are --since, --until, --campaign and --json.`,
      );
    }
    const value = eq > 0 ? arg.slice(eq + 1) : args[++i];
    if (value === undefined || value.trim() === "" || (eq < 0 && value.startsWith("--"))) {
      throw new SyncUsageError(`${flag} needs a value: ${form}.`);
    }
    if (flag === "--campaign") parsed.campaigns.push(value.trim());
    else if (flag === "--since") parsed.since = value.trim();
    else parsed.until = value.trim();
  }
  return parsed;
}

/**
 * `crm-insights-mcp sync`: brings the history up to date for the campaigns with rounds in the
 * window. Progress on stderr (bars on a terminal, one line per export otherwise); `--json` prints
 * the report on stdout. Exit 0 when every export was added (or was not ready yet), 1 otherwise,
 * with one line on stderr saying why.
 */
export async function runSyncCommand(args: readonly string[]): Promise<number> {
  const fail = (message: string): number => {
    process.stderr.write(`crm-insights-mcp sync: ${redact(message)}\n`);
    return 1;
  };
  if (args.includes("--help") || args.includes("-h")) {
    process.stdout.write(SYNC_USAGE);
    return 0;
  }
  let parsed: SyncArgs;
  let config: Config;
  try {
    parsed = parseSyncArgs(args);
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof SyncUsageError) return fail(error.message);
    if (error instanceof ConfigError) return fail(error.message);
    throw error;
  }
  if (!config.history.enabled) {
    return fail(
      "the history is off (CRM_HISTORY=off) and sync only fills the history; unset CRM_HISTORY to use it.",
    );
  }
  // The server's info lines (the sandbox starting, each file added) would bury the progress.
  setLogLevel(process.env.CRM_LOG_LEVEL === undefined ? "warn" : config.logLevel);
  for (const secret of [
    config.secretKey,
    config.recommendSecretKey,
    databasePassword(config.databaseUrl),
  ]) {
    registerSecret(secret);
  }
  const { createRuntime } = await import("../runtime.js");
  const runtime = createRuntime(config);
  let window: ReturnType<typeof resolveSyncWindow>;
  try {
    window = resolveSyncWindow(parsed.since, parsed.until, runtime.now(), config.timeZone);
  } catch (error) {
    await runtime.close();
    if (error instanceof SyncUsageError) return fail(error.message);
    throw error;
  }
  const controller = new AbortController();
  const stop = (signal: NodeJS.Signals) => {
    controller.abort(
      new Error(`stopped by ${signal}; a later sync continues where this one stopped`),
    );
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  const write = (text: string) => void process.stderr.write(text);
  const progress: SyncProgress = process.stderr.isTTY
    ? barProgress(write, () => process.stderr.columns ?? 80)
    : lineProgress(write);
  progress.note(
    `window ${describeWindow(window)} (${config.timeZone})${config.mode === "sandbox" ? "; sandbox mode: synthetic data" : ""}`,
  );
  let report: SyncReport;
  try {
    const history = await runtime.history.history();
    if (history === undefined) return fail("the history could not be opened.");
    report = await runSync(
      {
        runtime: runtimeWithoutBackgroundAdds(runtime),
        history,
        settled: () => runtime.history.settled(),
        progress,
        signal: controller.signal,
        principal: `local:${loginName()}`,
      },
      window,
      parsed.campaigns,
    );
  } catch (error) {
    progress.close();
    const reason = controller.signal.aborted ? controller.signal.reason : error;
    log.debug("sync failed", { error: String(error) });
    return fail(reason instanceof Error ? reason.message : String(reason));
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    await runtime.close();
  }
  progress.close();
  const failed = report.exports.filter((e) => e.status === "failed");
  if (parsed.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else process.stdout.write(summaryText(report));
  if (failed.length > 0) {
    const first = failed[0] as (typeof failed)[number];
    return fail(
      `${failed.length} export(s) failed; the others were added. First: ${first.campaign_id} ${first.from}..${first.to}: ${first.error ?? "failed"}`,
    );
  }
  return 0;
}

/**
 * The runtime as the export flow sees it, except that a downloaded file is not added in the
 * background: sync adds it itself, to await it and report what it added.
 */
function runtimeWithoutBackgroundAdds(runtime: ToolRuntime): ExportRuntime {
  return {
    config: runtime.config,
    ledger: runtime.ledger,
    sweepFiles: () => runtime.sweepFiles(),
    api: () => runtime.api(),
    now: () => runtime.now(),
    lastPolledAt: runtime.lastPolledAt,
    downloads: runtime.downloads,
    keepInHistory() {},
  };
}

function summaryText(report: SyncReport): string {
  return `${[
    `Campaigns with rounds in the window: ${report.campaigns}`,
    `Exports created: ${report.exports_created}, reused: ${report.exports_reused}`,
    `Rounds added: ${formatCount(report.rounds_added)}, rows added: ${formatCount(report.rows_added)}`,
    `Waited for the export budget: ${report.waited_seconds} s`,
  ].join("\n")}\n`;
}

function loginName(): string {
  try {
    return userInfo().username;
  } catch {
    return "unknown";
  }
}
