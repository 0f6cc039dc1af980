import { loadConfig } from "../config.js";
import { log } from "../log.js";
import { readSettings, startServerProcess } from "../startup.js";
import { HttpConfigError, loadHttpSettings } from "./http-config.js";

/**
 * `crm-insights-mcp serve --http [--port N] [--host H]`: the MCP server over Streamable HTTP.
 * The first stdout line is `{"url": ".../mcp"}`; logs go to stderr. Runs until SIGINT/SIGTERM,
 * then lets running calls finish within CRM_HTTP_SHUTDOWN_SECONDS.
 */
export async function runServeCommand(args: readonly string[]): Promise<number> {
  const read = readSettings(
    () => ({ settings: loadHttpSettings(args, process.env), config: loadConfig(process.env) }),
    (error) => error instanceof HttpConfigError,
  );
  if (read === undefined) return 1;
  const { settings, config } = read;
  const { runtime, sandboxGuide: guide } = await startServerProcess(config, settings.tokenSecrets);
  const [{ startHttpServer }, { PACKAGE_VERSION }] = await Promise.all([
    import("./http-server.js"),
    import("../version.js"),
  ]);
  let server: Awaited<ReturnType<typeof startHttpServer>>;
  try {
    server = await startHttpServer({
      config,
      settings,
      runtime,
      sandboxGuide: guide,
      version: PACKAGE_VERSION,
    });
  } catch (error) {
    await runtime.close();
    const code = (error as NodeJS.ErrnoException).code;
    process.stderr.write(
      `crm-insights-mcp: cannot listen on ${settings.host}:${settings.port}${code === "EADDRINUSE" ? " (the port is in use; pick another with --port, or --port 0 for a free one)" : ""}: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return 1;
  }
  process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
  log.info(
    `serving MCP over HTTP at ${server.url} (${config.mode === "sandbox" ? "embedded sandbox mode" : "remote mode"}; ledger: ${runtime.ledger.location}; ${settings.tokens.length === 0 ? (settings.oauth === undefined ? "no tokens: loopback only" : "no static tokens") : `${settings.tokens.length} token(s): ${[...new Set(settings.tokens.map((t) => t.name))].join(", ")}`}${settings.oauth === undefined ? "" : `; OAuth access tokens of ${settings.oauth.issuer}, audience ${settings.oauth.audience ?? settings.publicUrl ?? server.url}`})`,
  );

  return new Promise<number>((resolve) => {
    const shutdown = (signal: string) => {
      log.info(`shutting down (${signal}): finishing running calls`, {
        in_flight: server.inFlight(),
        grace_seconds: settings.shutdownGraceMs / 1000,
      });
      // A second signal means now.
      process.once(signal, () => resolve(1));
      server.close().then(
        () => resolve(0),
        (error: unknown) => {
          log.error("shutdown failed", { error: String(error) });
          resolve(1);
        },
      );
    };
    process.once("SIGINT", () => shutdown("SIGINT"));
    process.once("SIGTERM", () => shutdown("SIGTERM"));
  });
}
