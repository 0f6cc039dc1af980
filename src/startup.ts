import type { Config } from "./config.js";
import { ConfigError } from "./config.js";
import { sweepOrphanTempFiles } from "./file-io/orphan-files.js";
import { dataFolderInUse, exportsFolder } from "./files/data-folder.js";
import { databasePassword } from "./ledger/postgres-url.js";
import { log, setLogLevel } from "./log.js";
import type { ToolRuntime } from "./mcp/tool.js";
import { registerSecret } from "./redact.js";

/**
 * What every server process does before it serves, over stdio or HTTP alike: one place, so a
 * secret registered for redaction (or any other start-up step) cannot be added to one and
 * missed in the other.
 */

/**
 * Reads the configuration with `read`; a bad value is printed on stderr (the variable's name,
 * what is wrong) and gives `undefined`, for the caller to exit with 1.
 */
export function readSettings<T>(
  read: () => T,
  isSettingsError: (e: unknown) => boolean = () => false,
): T | undefined {
  try {
    return read();
  } catch (error) {
    if (error instanceof ConfigError || isSettingsError(error)) {
      process.stderr.write(`crm-insights-mcp: ${(error as Error).message}\n`);
      return undefined;
    }
    throw error;
  }
}

export interface StartedProcess {
  runtime: ToolRuntime;
  /** Sandbox mode: what exists in the sandbox, for the server's instructions. */
  sandboxGuide: string | undefined;
}

/** Log level, redaction of every secret, the process-wide error net, the runtime. */
export async function startServerProcess(
  config: Config,
  extraSecrets: readonly string[] = [],
): Promise<StartedProcess> {
  setLogLevel(config.logLevel);
  for (const secret of [
    config.secretKey,
    config.recommendSecretKey,
    databasePassword(config.databaseUrl),
    ...extraSecrets,
  ]) {
    registerSecret(secret);
  }
  // Background work (downloads, ledger writes) outlives the tool call that started it; a
  // rejection nobody awaited must cost that one piece of work, not the whole server.
  process.on("unhandledRejection", (reason) => {
    log.error("unhandled rejection", {
      error: reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason),
    });
  });
  const { createRuntime } = await import("./runtime.js");
  // One runtime for the process: stdio may build a probe server before the real one, and HTTP
  // builds one server per request.
  const runtime = createRuntime(config);
  // Temporary files of a process that was killed or crashed (a `.part` can be 700 MB): gone at
  // start, not when the next download happens to begin.
  const folder = dataFolderInUse(config);
  void sweepOrphanTempFiles([folder, exportsFolder(folder)]).then((removed) => {
    if (removed > 0) log.info(`removed ${removed} temporary file(s) a stopped process left behind`);
  });
  if (!runtime.sandbox) return { runtime, sandboxGuide: undefined };
  const { sandboxGuide } = await import("./sandbox/embedded.js");
  return { runtime, sandboxGuide: await sandboxGuide(config.sandbox.seed) };
}
