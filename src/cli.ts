#!/usr/bin/env node
/**
 * The package's bin. No arguments: the MCP server on stdio. `sandbox`, `summarize`, `query` and
 * the rest are subcommands; each is loaded on demand so the server's cold start does not pay for them.
 * The Node version is checked first, and this file imports nothing else statically: on an older
 * Node no module that needs a newer one is loaded, and the refusal is the only output.
 */
import type { Config } from "./config.js";
import { nodeVersionRefusal } from "./node-version.js";
import type { HistoryReader } from "./query/cli.js";

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
    case "query": {
      const { runQueryCommand } = await import("./query/cli.js");
      return runQueryCommand(args, { openHistory: configuredHistory });
    }
    case "sync": {
      const { runSyncCommand } = await import("./sync/cli.js");
      const code = await runSyncCommand(args);
      // The runtime is closed by now; a stray handle must not keep a finished run alive.
      setTimeout(() => process.exit(code), 2000).unref();
      return code;
    }
    case "serve": {
      const { runServeCommand } = await import("./http/cli.js");
      const code = await runServeCommand(args);
      // Everything is closed by now; a stray handle must not keep a stopped server alive.
      setTimeout(() => process.exit(code), 2000).unref();
      return code;
    }
    case "doctor": {
      const { runDoctorCommand } = await import("./doctor/cli.js");
      return runDoctorCommand(args);
    }
    case "audit": {
      const { runAuditCommand } = await import("./audit/cli.js");
      return runAuditCommand(args);
    }
    case "install": {
      const { runInstallCommand } = await import("./install/cli.js");
      return runInstallCommand(args);
    }
    case "--version":
    case "-v":
    case "version": {
      const { PACKAGE_VERSION } = await import("./version.js");
      process.stdout.write(`${PACKAGE_VERSION}\n`);
      return 0;
    }
    case "report": {
      const { runReportCommand } = await import("./report/cli.js");
      return runReportCommand(args);
    }
    case "--help":
    case "-h":
    case "help": {
      const { dataFolderLine } = await import("./doctor/cli.js");
      process.stdout.write(`${USAGE}\n${dataFolderLine(process.env)}\n`);
      return 0;
    }
    default:
      process.stderr.write(`Unknown command "${command}".\n\n${USAGE}`);
      return 2;
  }
}

const USAGE = `Usage:
  crm-insights-mcp                      MCP server on stdio (configured by CRM_* variables)
  crm-insights-mcp sandbox [--port N] [--host 127.0.0.1] [--seed N] [--now ISO-8601] [--job-seconds S]
                           [--csv-order O] [--csv-platform-ids P] [--csv-customer-ids C] [--huge-ab-test]
                                        local sandbox service with synthetic data
  crm-insights-mcp summarize FILE [--json] [--detail] [--lang ko|en] [--conversion-event-type T]
                           [--threads N]
                                        summarize a campaign CSV or scenario XLSX export
                                        (text in English unless --lang ko; --json the same in both)
  crm-insights-mcp query --sql SQL [--json] [--max-rows N] [--report PATH.html [--lang ko|en]] FILE...
                                        one read-only SQL statement (DuckDB) over export files:
                                        table events (campaign CSVs), scenario_nodes/scenario_days;
                                        --report also writes the answer's chart and table as a page
  crm-insights-mcp query --history --sql SQL [--json] [...]
                                        the same over the history of exports (tables history,
                                        history_campaigns): every export kept, across campaigns
  crm-insights-mcp serve --http [--port N] [--host H]
                                        the MCP server over Streamable HTTP at /mcp for a team
                                        (CRM_HTTP_TOKENS or CRM_OAUTH_ISSUER, CRM_DATABASE_URL;
                                        see docs/team-mode.md)
  crm-insights-mcp sync [--since 30d|DATE] [--until DATE] [--campaign ID]... [--json]
                                        bring the history up to date: exports only for the
                                        rounds it lacks, within the export budget (docs/sync.md)
  crm-insights-mcp report FILE --out PATH.html [--lang ko|en] [--conversion-event-type T]
                                        self-contained HTML report with charts of an export, in
                                        Korean or English: by default Korean when CRM_TIME_ZONE
                                        is Asia/Seoul (its default), else English
  crm-insights-mcp doctor [--json] [--lang ko|en]
                                        check the configuration, the data folder and both keys
                                        against the service (creates no export job); English
                                        unless --lang ko, --json always English
  crm-insights-mcp audit [--since ISO-8601] [--caller NAME] [--limit N] [--json]
                                        the audit trail: who called which tool, how it ended
  crm-insights-mcp install <claude-desktop|claude-code|vscode|cursor|codex|gemini> [--print]
                           [--force] [--name N] [--base-url URL] [--application-id ID]
                           [--secret-key KEY] ...
                                        add this server to an MCP client's configuration
                                        (sandbox unless service values are given; install --help)
  crm-insights-mcp --version            the package version
  crm-insights-mcp --help               this text

Configuration: CRM_* environment variables (see the README); with CRM_BASE_URL unset the server
uses an embedded sandbox with synthetic data.
`;

/**
 * The history `query --history` reads: the server's own for this configuration (the data folder
 * in use and the ledger's scope, as runtime.ts opens it), or undefined with CRM_HISTORY=off.
 */
async function configuredHistory(config: Config): Promise<HistoryReader | undefined> {
  const [
    { openHistory, withHistoryTables },
    { configLedgerScope },
    { dataFolderInUse },
    { PostgresConnection },
  ] = await Promise.all([
    import("./history/index.js"),
    import("./runtime.js"),
    import("./files/data-folder.js"),
    import("./ledger/postgres-pool.js"),
  ]);
  if (!config.history.enabled) return undefined;
  const database =
    config.databaseUrl === undefined ? undefined : new PostgresConnection(config.databaseUrl);
  const history = openHistory(config, dataFolderInUse(config), configLedgerScope(config), {
    database,
  });
  if (history === undefined) return undefined;
  return {
    folder: history.folder,
    read: (conversionEventType, work) =>
      withHistoryTables(history, conversionEventType, (extra, catalogue) =>
        work(extra, catalogue.exports.length),
      ),
    close: async () => {
      await history.close();
      await database?.close();
    },
  };
}

async function reportFailure(error: unknown): Promise<void> {
  const { redact } = await import("./redact.js");
  process.stderr.write(
    `crm-insights-mcp: ${redact(error instanceof Error ? error.message : String(error))}\n`,
  );
  process.exitCode = 1;
}

const refusal = nodeVersionRefusal(process.versions.node);
if (refusal === undefined) {
  main().then((code) => {
    // The server and the sandbox keep running until their transports close; only set the code.
    if (code !== 0) process.exitCode = code;
  }, reportFailure);
} else {
  process.stderr.write(`${refusal}\n`);
  process.exitCode = 1;
}
