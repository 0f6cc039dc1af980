import type { Config } from "../config.js";
import type { PostgresConnection } from "../ledger/postgres-pool.js";
import { FileCatalogueStore } from "./catalogue-file.js";
import { PostgresCatalogueStore } from "./catalogue-postgres.js";
import { History } from "./history.js";
import type { IngestClaims } from "./ingest-claims.js";
import { catalogueFilePath, historyFolder } from "./layout.js";

/**
 * The history of exports (issue "History"): every campaign CSV and scenario XLSX export the
 * server downloads, added once as Parquet under `CRM_DATA_DIR/history/<scope>/`, with questions
 * across campaigns and time over it. This is the module's door.
 */

export type { HistoryCampaign } from "./campaigns.js";
export type {
  CampaignExportRecord,
  ExportRecord,
  HistoryCatalogue,
  KeptRound,
  RoundKey,
  ScenarioExportRecord,
} from "./catalogue.js";
export { describeHistory, type HistoryDescription } from "./describe.js";
export { HistoryError } from "./errors.js";
export { HISTORY_EXAMPLES } from "./examples.js";
export { History, type HistoryOptions } from "./history.js";
export type { CampaignExportInput, IngestResult } from "./ingest-campaign.js";
export { type IngestClaims, ledgerIngestClaims } from "./ingest-claims.js";
export type { ScenarioExportInput, ScenarioIngestResult } from "./ingest-scenario.js";
export { type JobRows, jobRows } from "./job-files.js";
export { HistoryKeeper, type HistoryStatus } from "./keeper.js";
export { historyFolder } from "./layout.js";
export type { PruneResult } from "./prune.js";
export {
  type HistoryQueryOptions,
  type HistorySource,
  queryHistory,
  withHistoryTables,
} from "./query.js";
export type { CatalogueStore } from "./store.js";
export { historyTables } from "./views.js";

/** What openHistory takes besides the configuration and the place. */
export interface OpenHistoryOptions {
  /** The data's clock, which judges the kept days. */
  now?: () => number;
  /** The ledger's, for a process that adds files: one process at a time reads a job's file. */
  claims?: IngestClaims;
  /** The process's connection to CRM_DATABASE_URL, where the catalogue is; needed when it is set. */
  database?: PostgresConnection;
}

/**
 * The history of a configuration, or undefined when CRM_HISTORY=off. `dataFolder` is the data
 * folder in use (sandbox mode's own), `scope` the ledger's (runtime.ts configLedgerScope): one
 * history per service and application, its catalogue in the ledger's store (the file beside its
 * Parquet files, or PostgreSQL with CRM_DATABASE_URL, on the connection the ledger uses).
 */
export function openHistory(
  config: Pick<Config, "history" | "timeZone" | "databaseUrl" | "query">,
  dataFolder: string,
  scope: string,
  { now, claims, database }: OpenHistoryOptions = {},
): History | undefined {
  if (!config.history.enabled) return undefined;
  if (config.databaseUrl !== undefined && database === undefined) {
    // A catalogue beside the Parquet files would be one of its own, unknown to the team.
    throw new Error(
      "the history's catalogue is in CRM_DATABASE_URL: open the history with the process's connection to it",
    );
  }
  const folder = historyFolder(dataFolder, scope);
  const store =
    database === undefined
      ? new FileCatalogueStore(catalogueFilePath(folder))
      : new PostgresCatalogueStore(database, scope);
  return new History({
    folder,
    store,
    keepDays: config.history.keepDays,
    timeZone: config.timeZone,
    now,
    work: { threads: config.query.threads },
    claims,
  });
}
