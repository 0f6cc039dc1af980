import type { MetricsResponse } from "./api/schemas.js";
import type { CrmApi } from "./api/types.js";
import { openAuditTrail } from "./audit/index.js";
import { catalogFromProducts, loadCatalog, type ProductCatalog } from "./catalog.js";
import { apiClientOptionsFromConfig, type Config } from "./config.js";
import { DownloadManager } from "./exports/download-manager.js";
import { ClientRoots } from "./files/client-roots.js";
import { dataFolderInUse } from "./files/data-folder.js";
import { CampaignNames, rememberingNames } from "./history/campaign-names.js";
import { HistoryKeeper } from "./history/keeper.js";
import { JobLedger, ledgerScope } from "./ledger/ledger.js";
import { PostgresLedger } from "./ledger/postgres-ledger.js";
import { PostgresConnection } from "./ledger/postgres-pool.js";
import type { LedgerStore } from "./ledger/store.js";
import { log } from "./log.js";
import type { ToolRuntime } from "./mcp/tool.js";
import { type EmbeddedSandbox, pinnedClock } from "./sandbox/embedded.js";

export interface RuntimeDeps {
  /** A ready client (tests); otherwise built from the config, or from the embedded sandbox. */
  api?: CrmApi;
  /** The service's clock (tests against a sandbox pinned to a date); also the client's. */
  now?: () => number;
}

/**
 * The state shared by every server instance of the process (serveStdio may build more than one
 * McpServer): the API client, the embedded sandbox, the ledger and the catalog, all created
 * lazily on first use; with CRM_DATABASE_URL, the process's one connection pool to it, which
 * close() ends after everything that uses it.
 */
export function createRuntime(config: Config, deps: RuntimeDeps = {}): ToolRuntime {
  const sandboxMode = deps.api === undefined && config.mode === "sandbox";
  let apiPromise:
    | Promise<{ api: CrmApi; close?: () => Promise<void>; embedded?: EmbeddedSandbox }>
    | undefined;
  let catalogPromise: Promise<ProductCatalog | undefined> | undefined;
  // Read like the embedded sandbox reads it (an offset-less value in Asia/Seoul), so the first
  // call's default windows, before the sandbox runs, already follow the sandbox's "today".
  const pinnedNow = sandboxMode ? pinnedClock(config.sandbox.now) : Date.now;
  /** Set once the embedded sandbox runs: from then on its clock is the data's clock. */
  let sandboxNow: (() => number) | undefined;

  // The history names the campaigns it adds from the campaign_metrics answers of the process.
  const campaignNames: CampaignNames = new CampaignNames(
    async (query, options): Promise<MetricsResponse> =>
      (await connect()).api.campaignMetrics(query, options),
    config.timeZone,
  );
  const connect = () => {
    apiPromise ??= (async () => {
      if (deps.api !== undefined) return { api: rememberingNames(deps.api, campaignNames) };
      if (sandboxMode) {
        const { startEmbeddedSandbox } = await import("./sandbox/embedded.js");
        const embedded = await startEmbeddedSandbox(config);
        sandboxNow = embedded.now;
        const api = rememberingNames(embedded.api, campaignNames);
        return { api, close: () => embedded.close(), embedded };
      }
      const { createApiClient } = await import("./api/client.js");
      // A test's pinned service clock also judges download-URL expiry.
      const client = createApiClient(
        apiClientOptionsFromConfig(config, deps.now === undefined ? {} : { now: deps.now }),
      );
      return { api: rememberingNames(client, campaignNames), close: () => client.close() };
    })();
    // A failed start (e.g. a port problem) is retried on the next call rather than cached.
    apiPromise.catch(() => {
      apiPromise = undefined;
    });
    return apiPromise;
  };

  const now = () => {
    if (deps.now !== undefined) return deps.now();
    if (sandboxNow !== undefined) return sandboxNow();
    // The sandbox's data lies before its pinned "now"; default windows follow that clock.
    return pinnedNow();
  };
  const scope = configLedgerScope(config, sandboxMode);
  const dataFolder = sandboxMode ? dataFolderInUse(config) : config.dataDir;
  // One pool for the process: the ledger, the history's catalogue and the audit trail share it.
  const database =
    config.databaseUrl === undefined ? undefined : new PostgresConnection(config.databaseUrl);
  const ledger: LedgerStore =
    database === undefined
      ? new JobLedger(dataFolder, config.exportBudget, now, scope)
      : new PostgresLedger(database, config.exportBudget, now, scope);
  let sweeping: Promise<void> | undefined;
  let sweptAtStart = false;
  let sweepAgain = false;
  const sweepFiles = (): Promise<void> => {
    if (sweeping !== undefined) {
      sweepAgain = true;
      return sweeping;
    }
    sweeping = (async () => {
      const { runRetention } = await import("./exports/retention-run.js");
      do {
        sweepAgain = false;
        const result = await runRetention({
          dataFolder,
          policy: config.retention,
          // File ages are judged by the file system's clock that stamped them (see fs-clock.ts).
          ledgerNow: now,
          budget: config.exportBudget,
        });
        // The folder's file ledgers are marked by runRetention; a database ledger is marked here.
        if (result.removed.length > 0 && ledger instanceof PostgresLedger) {
          await ledger.markFilesRemoved(result.removed);
        }
        if (result.removed.length > 0) {
          log.info("retention removed export files", {
            files: result.removed.length,
            bytes: result.removed.reduce((sum, f) => sum + f.bytes, 0),
          });
        }
      } while (sweepAgain);
    })()
      .catch((error: unknown) => {
        log.warn("retention sweep failed", {
          error: error instanceof Error ? error.message : String(error),
        });
      })
      .finally(() => {
        sweeping = undefined;
      });
    return sweeping;
  };

  // The data's clock judges the kept days: the sandbox's rounds lie before its pinned "now".
  const history = new HistoryKeeper(
    async () => {
      if (!config.history.enabled) return undefined;
      const { openHistory, ledgerIngestClaims } = await import("./history/index.js");
      const { leaseHolderGone } = await import("./exports/download-lease.js");
      const claims = ledgerIngestClaims(ledger, leaseHolderGone);
      return openHistory(config, dataFolder, scope, { now, claims, database });
    },
    ledger,
    campaignNames,
  );

  const clientRoots = new ClientRoots();
  const runtime: ToolRuntime = {
    config,
    sandbox: sandboxMode,
    // The ledger compares with the service's timestamps (URL expiry, job creation): same clock.
    ledger,
    dataFolder,
    clientRoots,
    async readableFolders() {
      return { dataFolder, readDirs: config.readDirs, roots: await clientRoots.folders() };
    },
    sweepFiles,
    lastPolledAt: new Map(),
    downloads: new DownloadManager(),
    audit: openAuditTrail({ database, dataFolder }),
    history,
    keepInHistory(jobId) {
      history.add(jobId);
    },
    async api() {
      // The first call of the process applies the retention limits to what earlier runs left,
      // and adds to the history the files an earlier run downloaded but did not add.
      if (!sweptAtStart) {
        sweptAtStart = true;
        void sweepFiles();
        void history.history().catch(() => undefined);
      }
      return (await connect()).api;
    },
    catalog() {
      catalogPromise ??= (async () => {
        if (config.productCatalogPath !== undefined) return loadCatalog(config.productCatalogPath);
        if (!sandboxMode) return undefined;
        const { embedded } = await connect();
        return embedded === undefined ? undefined : catalogFromProducts(embedded.products);
      })();
      catalogPromise.catch(() => {
        catalogPromise = undefined;
      });
      return catalogPromise;
    },
    async knownSlotKeys() {
      if (!sandboxMode) return undefined;
      const { sandboxSlotKeys } = await import("./sandbox/embedded.js");
      return sandboxSlotKeys();
    },
    now,
    async close() {
      await sweeping;
      // Before the client closes: each aborted download removes its partial file first.
      await runtime.downloads.close();
      await history.close();
      const started = apiPromise;
      apiPromise = undefined;
      if (started !== undefined) {
        const { close } = await started.catch(() => ({ close: undefined }));
        await close?.();
      }
      await runtime.ledger.close();
      await runtime.audit.close();
      // Last: what the ledger and the audit trail hold back during an outage is written here.
      await database?.close();
    },
  };
  return runtime;
}

/** Jobs, budget and reuse are per service and application; the sandbox has its own scope. */
export function configLedgerScope(
  config: Config,
  sandbox: boolean = config.mode === "sandbox",
): string {
  return sandbox
    ? ledgerScope("sandbox", undefined)
    : ledgerScope(config.baseUrl ?? "", config.applicationId);
}
