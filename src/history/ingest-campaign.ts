import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { checkExportFile, ExportFileError } from "../files/export-path.js";
import { withFileInUse } from "../files/in-use.js";
import { type IncomingExport, keptOn, planCampaign } from "./campaign-plan.js";
import { writeCampaignPartitions } from "./campaign-write.js";
import {
  type CampaignExportRecord,
  eventsPartitions,
  type HistoryCatalogue,
  roundId,
} from "./catalogue.js";
import { commitPlanned } from "./commit.js";
import type { HistoryContext } from "./context.js";
import { HistoryError } from "./errors.js";
import { newStagingFolder } from "./layout.js";
import { trimmedExports } from "./prune.js";
import { stageCampaignCsv } from "./stage-campaign.js";
import { openWorkEngine } from "./work-engine.js";

/** A downloaded campaign CSV export and what its job says about it. */
export interface CampaignExportInput {
  path: string;
  jobId: string;
  campaignId: string;
  /** The job's `from` and `to` (null or absent: not limited on that side). */
  window: { from?: string | null | undefined; to?: string | null | undefined };
  /** The job's `created_at`: the newest export holding a round is the one kept. */
  jobCreatedAt: string;
  /** The campaign's name, where the caller knows it (campaign_metrics). */
  campaignName?: string | null | undefined;
  signal?: AbortSignal | undefined;
}

/** What adding one export did. */
export interface IngestResult {
  job_id: string;
  status: "added" | "already_added";
  /** Data rows of the file. */
  rows: number;
  /** Of them, the rows the history now keeps. */
  rows_kept: number;
  /** Rounds of the file. */
  rounds: number;
  /** Rounds the history did not hold before. */
  rounds_added: number;
  /** Rounds it held from an older export, now from this one. */
  rounds_replaced: number;
  /** Rounds a newer export already gave the history (this file's rows of them are left out). */
  rounds_newer_kept: number;
  /** Rounds older than the kept days (CRM_HISTORY_DAYS). */
  rounds_past_kept_days: number;
}

/** Conflicting commits of other processes tolerated before giving up (each one re-plans). */
const MAX_ATTEMPTS = 8;

export async function ingestCampaignExport(
  context: HistoryContext,
  input: CampaignExportInput,
): Promise<IngestResult> {
  const before = await context.store.read();
  if (before.exports.some((e) => e.job_id === input.jobId)) return already(before, input.jobId);
  const createdAt = Date.parse(input.jobCreatedAt);
  if (!Number.isFinite(createdAt)) {
    throw new TypeError(`jobCreatedAt must be an ISO 8601 time, got ${input.jobCreatedAt}`);
  }
  const file = await checkCampaignFile(input.path);
  const staging = newStagingFolder(context.folder);
  await mkdir(staging, { recursive: true });
  const engine = await openWorkEngine(context.work, join(staging, "spill"), input.signal);
  try {
    const staged = await withFileInUse(file.path, () =>
      stageCampaignCsv(engine, file.path, input.jobId, staging),
    );
    const cutoff = context.cutoff();
    const allRounds = [...staged.months.values()].flatMap((m) => m.rounds);
    const record: CampaignExportRecord = {
      kind: "campaign_event_data",
      job_id: input.jobId,
      campaign_id: input.campaignId,
      campaign_name: input.campaignName ?? null,
      window: { from: input.window.from ?? null, to: input.window.to ?? null },
      job_created_at: new Date(createdAt).toISOString(),
      ingested_at: new Date(context.now()).toISOString(),
      source: { path: file.path, bytes: file.bytes },
      rows: staged.rows,
      channels: staged.channels,
      rounds: allRounds.filter((r) => keptOn(r, cutoff)),
    };
    const incoming: IncomingExport = { record, staged: staged.months };
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const base = await context.store.read();
      if (base.exports.some((e) => e.job_id === input.jobId)) return already(base, input.jobId);
      const actions = planCampaign(base, incoming, cutoff);
      const write = await writeCampaignPartitions(engine, context.folder, staging, actions);
      const committed = await commitPlanned(context, {
        base,
        write,
        drop: actions.filter((a) => a.kind === "drop").map((a) => a.dir),
        putExports: [...trimmedExports(base, cutoff), record],
      });
      if (committed !== undefined) return outcome(base, committed, record, allRounds, cutoff);
    }
    throw new HistoryError(
      `the history kept changing under other processes while ${input.jobId} was being added (${MAX_ATTEMPTS} tries); nothing of it was added. Retry shortly.`,
      "busy",
    );
  } finally {
    engine.close();
    await rm(staging, { recursive: true, force: true });
  }
}

async function checkCampaignFile(path: string): Promise<{ path: string; bytes: number }> {
  try {
    const file = await checkExportFile(path);
    if (file.kind !== "campaign_csv") {
      throw new HistoryError(
        `${JSON.stringify(path)} is not a campaign CSV export; it cannot be added to the campaign history.`,
        "not_campaign_export",
      );
    }
    return file;
  } catch (error) {
    if (!(error instanceof ExportFileError)) throw error;
    const code =
      error.code === "not_found"
        ? "not_found"
        : error.code === "empty_file"
          ? "malformed_file"
          : "not_campaign_export";
    throw new HistoryError(`not added to the history: ${error.message}`, code);
  }
}

function already(catalogue: HistoryCatalogue, jobId: string): IngestResult {
  const record = catalogue.exports.find((e) => e.job_id === jobId);
  const rounds = record?.kind === "campaign_event_data" ? record.rounds.length : 0;
  return {
    job_id: jobId,
    status: "already_added",
    rows: record?.rows ?? 0,
    rows_kept: keptRowsOf(catalogue, jobId),
    rounds,
    rounds_added: 0,
    rounds_replaced: 0,
    rounds_newer_kept: 0,
    rounds_past_kept_days: 0,
  };
}

function keptRowsOf(catalogue: HistoryCatalogue, jobId: string): number {
  let rows = 0;
  for (const p of eventsPartitions(catalogue)) {
    for (const r of p.rounds) if (r.job_id === jobId) rows += r.rows;
  }
  return rows;
}

function outcome(
  before: HistoryCatalogue,
  after: HistoryCatalogue,
  record: CampaignExportRecord,
  allRounds: { scheduled_at: string; task_id: string | null; group: string | null }[],
  cutoff: string | null,
): IngestResult {
  const held = new Set(
    eventsPartitions(before)
      .filter((p) => p.campaign_id === record.campaign_id)
      .flatMap((p) => p.rounds.map(roundId)),
  );
  const mine = new Set(
    eventsPartitions(after).flatMap((p) =>
      p.rounds.filter((r) => r.job_id === record.job_id).map(roundId),
    ),
  );
  let added = 0;
  let replaced = 0;
  let newer = 0;
  let past = 0;
  for (const round of allRounds) {
    const id = roundId(round);
    if (!keptOn(round, cutoff)) past += 1;
    else if (!mine.has(id)) newer += 1;
    else if (held.has(id)) replaced += 1;
    else added += 1;
  }
  return {
    job_id: record.job_id,
    status: "added",
    rows: record.rows,
    rows_kept: keptRowsOf(after, record.job_id),
    rounds: allRounds.length,
    rounds_added: added,
    rounds_replaced: replaced,
    rounds_newer_kept: newer,
    rounds_past_kept_days: past,
  };
}
