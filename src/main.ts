import { ConfigError, loadConfig } from "./config.js";
import { dataFolderInUse, exportsFolder } from "./files/data-folder.js";
import { databasePassword } from "./ledger/postgres-url.js";
import { log, setLogLevel } from "./log.js";
import { sweepOrphanTempFiles } from "./orphan-files.js";
import { registerSecret } from "./redact.js";

/**
 * The MCP server on stdio. Resolves with the exit code once the connection ends (stdin closed,
 * SIGINT or SIGTERM); only MCP messages go to stdout.
 */
export async function runServer(): Promise<number> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`crm-insights-mcp: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
  setLogLevel(config.logLevel);
  registerSecret(config.secretKey);
  registerSecret(config.recommendSecretKey);
  registerSecret(databasePassword(config.databaseUrl));
  // Background work (downloads, ledger writes) outlives the tool call that started it; a
  // rejection nobody awaited must cost that one piece of work, not the assistant's session.
  process.on("unhandledRejection", (reason) => {
    log.error("unhandled rejection", {
      error: reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason),
    });
  });

  const [{ serveStdio }, { createServer, sandboxGuide }, { createRuntime }] = await Promise.all([
    import("@modelcontextprotocol/server/stdio"),
    import("./server.js"),
    import("./tools/runtime.js"),
  ]);
  // One runtime for the process: serveStdio may build a probe instance before the real one.
  const runtime = createRuntime(config);
  // Temporary files of a process that was killed or crashed (a `.part` can be 700 MB): gone at
  // start, not when the next download happens to begin.
  const folder = dataFolderInUse(config);
  void sweepOrphanTempFiles([folder, exportsFolder(folder)]).then((removed) => {
    if (removed > 0) log.info(`removed ${removed} temporary file(s) a stopped process left behind`);
  });
  const guide = runtime.sandbox ? await sandboxGuide(config) : undefined;
  const deps = guide === undefined ? { runtime } : { runtime, sandboxGuide: guide };
  const handle = serveStdio(() => createServer(config, deps).server, {
    onerror: (error) => log.warn("transport error", { error: error.message }),
  });
  log.info(`server ready (${config.mode === "sandbox" ? "embedded sandbox mode" : "remote mode"})`);

  return new Promise<number>((resolve) => {
    let closing = false;
    const shutdown = (reason: string, code: number) => {
      if (closing) return;
      closing = true;
      log.info(`shutting down: ${reason}`);
      // Cap the wait: a stuck socket must not keep the process alive after the client left.
      const timer = setTimeout(() => resolve(code), 3000);
      timer.unref();
      Promise.allSettled([handle.close(), runtime.close()]).then(() => {
        clearTimeout(timer);
        resolve(code);
      });
    };
    process.once("SIGINT", () => shutdown("SIGINT", 0));
    process.once("SIGTERM", () => shutdown("SIGTERM", 0));
    process.stdin.once("end", () => shutdown("stdin closed", 0));
    process.stdin.once("close", () => shutdown("stdin closed", 0));
  });
}
