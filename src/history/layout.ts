import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { ownedTempPath } from "../file-io/orphan-files.js";

/**
 * Where the history's files go, inside its folder (`CRM_DATA_DIR/history/<scope>/`, one per
 * service and application, as the ledger's scope):
 *
 *   catalogue.json                      the file catalogue (catalogue-file.ts)
 *   events/campaign_id=<id>/round_month=YYYY-MM/part-<generation>-<random>.parquet
 *   messages/campaign_id=<id>/round_month=YYYY-MM/part-<generation>-<random>.parquet
 *                                       one row per user and round of the events beside it
 *   scenario_days/scenario_id=<id>/part-<generation>-<random>.parquet
 *   .staging/<owner>.tmp/               a process's work in progress (swept when its owner is gone)
 *
 * Hive-style folders (`key=value`, values escaped as %XX, as DuckDB writes them and Spark, Trino,
 * pandas/pyarrow, polars and BigQuery read them); the partition keys live in the folder names
 * only, never in the files, as those readers expect. One file per partition: a commit replaces
 * it whole, so the tree stays one file per campaign and month.
 */

export const EVENTS_DATASET = "events";
export const SCENARIO_DATASET = "scenario_days";
export const MESSAGES_DATASET = "messages";

/** The history folder of one scope of a data folder. */
export function historyFolder(dataFolder: string, scope: string): string {
  return join(dataFolder, "history", scope);
}

export function catalogueFilePath(folder: string): string {
  return join(folder, "catalogue.json");
}

/** What the history's lock is taken on (`<folder>/history.lock`). */
export function lockTarget(folder: string): string {
  return join(folder, "history");
}

export function stagingRoot(folder: string): string {
  return join(folder, ".staging");
}

/** A new folder name for this process's staged files, which the sweep knows as its own. */
export function newStagingFolder(folder: string): string {
  return ownedTempPath(join(stagingRoot(folder), "work"), "tmp");
}

/**
 * A partition value as a folder name: every byte outside [A-Za-z0-9_-] as %XX (UTF-8), so an ID
 * holding `/`, `=`, `%`, `.` or a character a file system refuses stays one safe folder name that
 * every hive reader decodes back.
 */
export function hiveValue(value: string): string {
  let out = "";
  for (const byte of Buffer.from(value, "utf8")) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9_-]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

export function eventsPartitionDir(campaignId: string, roundMonth: string): string {
  return `${EVENTS_DATASET}/campaign_id=${hiveValue(campaignId)}/round_month=${roundMonth}`;
}

/** The messages folder of the events partition in `eventsDir`. */
export function messagesPartitionDir(eventsDir: string): string {
  return `${MESSAGES_DATASET}/${eventsDir.slice(EVENTS_DATASET.length + 1)}`;
}

export function scenarioPartitionDir(scenarioId: string): string {
  return `${SCENARIO_DATASET}/scenario_id=${hiveValue(scenarioId)}`;
}

/** A new live file name in `dir`: never the name of a file a reader may still be reading. */
export function newPartitionFile(dir: string, generation: number): string {
  return `${dir}/part-${generation}-${randomBytes(6).toString("hex")}.parquet`;
}
