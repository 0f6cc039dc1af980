import { loadConfig } from "./config.js";
import { log } from "./log.js";
import { nodeVersionRefusal } from "./node-version.js";
import { readSettings, startServerProcess } from "./startup.js";

/**
 * The MCP server on stdio. Resolves with the exit code once the connection ends (stdin closed,
 * SIGINT or SIGTERM); only MCP messages go to stdout. The bin checks the Node version before it
 * loads this module; the check is repeated for a caller that starts the server without the bin.
 */
export async function runServer(): Promise<number> {
  const refusal = nodeVersionRefusal(process.versions.node);
  if (refusal !== undefined) {
    process.stderr.write(`${refusal}\n`);
    return 1;
  }
  const config = readSettings(() => loadConfig(process.env));
  if (config === undefined) return 1;
  const { runtime, sandboxGuide } = await startServerProcess(config);
  const [{ serveStdio }, { createServer }, { StdioBatchTransport }] = await Promise.all([
    import("@modelcontextprotocol/server/stdio"),
    import("./server.js"),
    import("./mcp/stdio-batches.js"),
  ]);
  const deps = sandboxGuide === undefined ? { runtime } : { runtime, sandboxGuide };
  // MCP roots are asked for with the 2025-era `roots/list`; a 2026-era instance has no such request.
  const handle = serveStdio(
    ({ era }) => createServer(config, { ...deps, clientRoots: era === "legacy" }).server,
    {
      // The SDK's stdio transport reads single messages only; 2025-03-26 also has batches.
      transport: new StdioBatchTransport(),
      onerror: (error) => log.warn("transport error", { error: error.message }),
    },
  );
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
