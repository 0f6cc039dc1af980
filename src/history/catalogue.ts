import { z } from "zod";

/**
 * The history's catalogue: which exports were ingested (campaign, window, rounds, rows, when)
 * and which Parquet file is live in each partition, with the rounds it keeps and the export each
 * came from. Readers read only the files it names, so a change is one commit of it (a rename of
 * one file, or one PostgreSQL transaction): a process killed mid-way leaves at worst files it
 * names nowhere, which the sweep removes (sweep.ts).
 */

/** A send round as written in the file (spec 2.4); an empty field is null. */
export interface RoundKey {
  task_id: string | null;
  /** `YYYY-MM-DD HH:mm:ss`, the application's local time, as in the file. */
  scheduled_at: string;
  group: string | null;
}

export interface RoundRows extends RoundKey {
  rows: number;
}

/** A round the history keeps, and the export its rows come from. */
export interface KeptRound extends RoundRows {
  job_id: string;
}

interface ExportBase {
  job_id: string;
  /** The job's creation time (ISO 8601 UTC): among exports holding a round, the newest wins. */
  job_created_at: string;
  /** The export's requested range as the job states it (null: not limited on that side). */
  window: { from: string | null; to: string | null };
  ingested_at: string;
  /** The downloaded file it was read from (retention may remove it later; history stays). */
  source: { path: string; bytes: number };
  /** Data rows of the file (header excluded). */
  rows: number;
}

export interface CampaignExportRecord extends ExportBase {
  kind: "campaign_event_data";
  campaign_id: string;
  /** Where known (the caller passes it, e.g. from campaign_metrics). */
  campaign_name: string | null;
  /** Channels of its send-record rows (`control` excluded). */
  channels: string[];
  /** Every round the file held within the kept days, with its rows in the file. */
  rounds: RoundRows[];
}

export interface ScenarioExportRecord extends ExportBase {
  kind: "scenario_daily_metrics";
  scenario_id: string;
  nodes: number;
  first_date: string | null;
  last_date: string | null;
}

export type ExportRecord = CampaignExportRecord | ScenarioExportRecord;

interface PartitionBase {
  /** The partition's folder, relative to the history folder (also its identity). */
  dir: string;
  /** The live file, relative to the history folder. */
  file: string;
  rows: number;
  bytes: number;
}

/** One campaign's rounds of one month (by scheduled_at): `events/campaign_id=/round_month=`. */
export interface EventsPartition extends PartitionBase {
  dataset: "events";
  campaign_id: string;
  /** `YYYY-MM`. */
  round_month: string;
  rounds: KeptRound[];
  /**
   * The file of its messages (messages.ts), relative to the history folder: one row per user and
   * round of the same rounds. Absent in a partition written before messages were kept: readers
   * then group its events themselves.
   */
  messages?: MessagesFile | undefined;
}

/** A partition's messages file (`messages/campaign_id=/round_month=`). */
export interface MessagesFile {
  file: string;
  rows: number;
  bytes: number;
  /** USER_KEY_PROBE's hash by the DuckDB that wrote it (messages.ts). */
  key_probe: string;
}

/** One scenario's daily metrics: `scenario_days/scenario_id=`. */
export interface ScenarioPartition extends PartitionBase {
  dataset: "scenario_days";
  scenario_id: string;
  /** The exports whose days the file keeps. */
  jobs: string[];
  first_date: string | null;
  last_date: string | null;
}

export type Partition = EventsPartition | ScenarioPartition;

export interface HistoryCatalogue {
  /** Bumped by every commit; a commit names the generation it was planned on. */
  generation: number;
  exports: ExportRecord[];
  partitions: Partition[];
}

/** What one commit changes: records put (by job_id, by dir) and partitions dropped (by dir). */
export interface CatalogueChange {
  putExports?: ExportRecord[];
  putPartitions?: Partition[];
  dropPartitions?: string[];
}

export function emptyCatalogue(): HistoryCatalogue {
  return { generation: 0, exports: [], partitions: [] };
}

/** The catalogue after `change`, one generation on. */
export function applyChange(
  catalogue: HistoryCatalogue,
  change: CatalogueChange,
): HistoryCatalogue {
  const exports = new Map(catalogue.exports.map((e) => [e.job_id, e]));
  for (const record of change.putExports ?? []) exports.set(record.job_id, record);
  const partitions = new Map(catalogue.partitions.map((p) => [p.dir, p]));
  for (const dir of change.dropPartitions ?? []) partitions.delete(dir);
  for (const partition of change.putPartitions ?? []) partitions.set(partition.dir, partition);
  return {
    generation: catalogue.generation + 1,
    exports: [...exports.values()],
    partitions: [...partitions.values()],
  };
}

/** One text per round, equal for equal rounds. */
export function roundId(round: RoundKey): string {
  return JSON.stringify([round.task_id, round.scheduled_at, round.group]);
}

/** Export order for "newest": the job's creation time, then its ID (a fixed order for ties). */
export function compareExports(
  a: Pick<ExportBase, "job_created_at" | "job_id">,
  b: Pick<ExportBase, "job_created_at" | "job_id">,
): number {
  const ta = Date.parse(a.job_created_at);
  const tb = Date.parse(b.job_created_at);
  if (ta !== tb) return ta < tb ? -1 : 1;
  return a.job_id < b.job_id ? -1 : a.job_id > b.job_id ? 1 : 0;
}

export function campaignExports(catalogue: HistoryCatalogue): CampaignExportRecord[] {
  return catalogue.exports.filter(
    (e): e is CampaignExportRecord => e.kind === "campaign_event_data",
  );
}

export function eventsPartitions(catalogue: HistoryCatalogue): EventsPartition[] {
  return catalogue.partitions.filter((p): p is EventsPartition => p.dataset === "events");
}

/** Every file a partition names (its own and, for events, its messages file), relative. */
export function partitionFiles(partition: Partition): string[] {
  const messages = partition.dataset === "events" ? partition.messages?.file : undefined;
  return messages === undefined ? [partition.file] : [partition.file, messages];
}

export function scenarioPartitions(catalogue: HistoryCatalogue): ScenarioPartition[] {
  return catalogue.partitions.filter((p): p is ScenarioPartition => p.dataset === "scenario_days");
}

const nullableText = z.string().nullable();
const roundRows = z.object({
  task_id: nullableText,
  scheduled_at: z.string(),
  group: nullableText,
  rows: z.number().int().nonnegative(),
});
const exportBase = {
  job_id: z.string().min(1),
  job_created_at: z.string(),
  window: z.object({ from: nullableText, to: nullableText }),
  ingested_at: z.string(),
  source: z.object({ path: z.string(), bytes: z.number().nonnegative() }),
  rows: z.number().int().nonnegative(),
};
const partitionBase = {
  dir: z.string().min(1),
  file: z.string().min(1),
  rows: z.number().int().nonnegative(),
  bytes: z.number().nonnegative(),
};

export const exportRecordSchema = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("campaign_event_data"),
    ...exportBase,
    campaign_id: z.string().min(1),
    campaign_name: nullableText,
    channels: z.array(z.string()),
    rounds: z.array(roundRows),
  }),
  z.object({
    kind: z.literal("scenario_daily_metrics"),
    ...exportBase,
    scenario_id: z.string().min(1),
    nodes: z.number().int().nonnegative(),
    first_date: nullableText,
    last_date: nullableText,
  }),
]);

export const partitionSchema = z.discriminatedUnion("dataset", [
  z.object({
    dataset: z.literal("events"),
    ...partitionBase,
    campaign_id: z.string().min(1),
    round_month: z.string().regex(/^\d{4}-\d{2}$/),
    rounds: z.array(roundRows.extend({ job_id: z.string().min(1) })),
    messages: z
      .object({
        file: z.string().min(1),
        rows: z.number().int().nonnegative(),
        bytes: z.number().nonnegative(),
        key_probe: z.string(),
      })
      .optional(),
  }),
  z.object({
    dataset: z.literal("scenario_days"),
    ...partitionBase,
    scenario_id: z.string().min(1),
    jobs: z.array(z.string()),
    first_date: nullableText,
    last_date: nullableText,
  }),
]);

export const catalogueSchema = z.object({
  generation: z.number().int().nonnegative(),
  exports: z.array(exportRecordSchema),
  partitions: z.array(partitionSchema),
});
