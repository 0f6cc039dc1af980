#!/usr/bin/env node
/**
 * The package's bin. No arguments: the MCP server on stdio. `sandbox` and `summarize` are
 * subcommands; each is loaded on demand so the server's cold start does not pay for them.
 */
import { redact } from "./redact.js";

const [command, ...args] = process.argv.slice(2);

async function main(): Promise<number> {
  switch (command) {
    case undefined: {
      const { runServer } = await import("./main.js");
      return runServer();
    }
    case "sandbox": {
      const { runSandboxCommand } = await import("./sandbox/cli.js");
      return runSandboxCommand(args);
    }
    case "summarize": {
      const { runSummarizeCommand } = await import("./analysis/cli.js");
      return runSummarizeCommand(args);
    }
    case "--help":
    case "-h":
    case "help":
      process.stderr.write(USAGE);
      return 0;
    default:
      process.stderr.write(`Unknown command "${command}".\n\n${USAGE}`);
      return 2;
  }
}

const USAGE = `Usage:
  crm-insights-mcp                      MCP server on stdio (configured by CRM_* variables)
  crm-insights-mcp sandbox [--port N] [--host 127.0.0.1] [--seed N] [--now ISO-8601] [--job-seconds S]
                                        local sandbox service with synthetic data
  crm-insights-mcp summarize FILE [--json] [--detail] [--conversion-event-type T]
                                        summarize a campaign CSV or scenario XLSX export
`;

main().then(
  (code) => {
    // The server and the sandbox keep running until their transports close; only set the code.
    if (code !== 0) process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `crm-insights-mcp: ${redact(error instanceof Error ? error.message : String(error))}\n`,
    );
    process.exitCode = 1;
  },
);
