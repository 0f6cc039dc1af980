import type { LedgerEntry } from "../ledger/store.js";
import { log } from "../log.js";
import { isRegularFile } from "../regular-file.js";
import { keptCampaignName } from "./campaign-names.js";
import { type HistoryCampaign, historyCampaigns, keptRounds, renamedExports } from "./campaigns.js";
import type { HistoryCatalogue, KeptRound } from "./catalogue.js";
import { commitPlanned, withHistoryLock } from "./commit.js";
import { cutoffDate, type HistoryContext } from "./context.js";
import { HistoryError } from "./errors.js";
import {
  type CampaignExportInput,
  type IngestResult,
  ingestCampaignExport,
} from "./ingest-campaign.js";
import { type IngestClaims, unclaimed, withIngestClaim } from "./ingest-claims.js";
import {
  ingestScenarioExport,
  type ScenarioExportInput,
  type ScenarioIngestResult,
} from "./ingest-scenario.js";
import { type PruneResult, pruneHistory } from "./prune.js";
import type { CatalogueStore } from "./store.js";
import { sweepHistory } from "./sweep.js";
import type { WorkLimits } from "./work-engine.js";

export interface HistoryOptions {
  /** The history folder (layout.ts historyFolder: `<data folder>/history/<scope>`). */
  folder: string;
  store: CatalogueStore;
  /** CRM_HISTORY_DAYS. */
  keepDays: number;
  /** CRM_TIME_ZONE: whose "today" the kept days count back from. */
  timeZone: string;
  now?: (() => number) | undefined;
  /** The writing engine's limits; default 128 MB and 2 threads. */
  work?: Partial<WorkLimits> | undefined;
  /** Claims that let one process at a time read a job's file (ingest-claims.ts); none: unclaimed. */
  claims?: IngestClaims | undefined;
}

export const DEFAULT_WORK_LIMITS: WorkLimits = { memoryMb: 128, threads: 2 };

/** Conflicting commits of other processes tolerated while naming campaigns. */
const MAX_NAMING_ATTEMPTS = 8;

/**
 * The history of one data folder and scope: every campaign CSV and scenario XLSX export added
 * once (newest export wins a round), kept for CRM_HISTORY_DAYS, read by query sessions through
 * `tables`. Safe to use from several processes at once (one lock, one catalogue commit per
 * change); within a process, one job is added once however many callers ask.
 */
export class History implements HistoryContext {
  readonly folder: string;
  readonly store: CatalogueStore;
  readonly work: WorkLimits;
  private readonly keepDays: number;
  private readonly timeZone: string;
  private readonly clock: () => number;
  private readonly claims: IngestClaims | undefined;
  private readonly adding = new Map<string, Promise<IngestResult | ScenarioIngestResult>>();

  constructor(options: HistoryOptions) {
    this.folder = options.folder;
    this.store = options.store;
    this.keepDays = options.keepDays;
    this.timeZone = options.timeZone;
    this.clock = options.now ?? Date.now;
    this.work = { ...DEFAULT_WORK_LIMITS, ...options.work };
    this.claims = options.claims;
  }

  now(): number {
    return this.clock();
  }

  cutoff(): string {
    return cutoffDate(this.clock(), this.timeZone, this.keepDays);
  }

  /** Adds a downloaded campaign CSV (once; a second call answers `already_added`). */
  ingestCampaignExport(input: CampaignExportInput): Promise<IngestResult> {
    const named = { ...input, campaignName: keptCampaignName(input.campaignName) };
    return this.once(
      input.jobId,
      () => ingestCampaignExport(this, named),
      input.signal,
    ) as Promise<IngestResult>;
  }

  /** Adds a downloaded scenario XLSX to the daily-metrics table (once). */
  ingestScenarioExport(input: ScenarioExportInput): Promise<ScenarioIngestResult> {
    return this.once(
      input.jobId,
      () => ingestScenarioExport(this, input),
      input.signal,
    ) as Promise<ScenarioIngestResult>;
  }

  /** Adds the downloaded file of a ledger entry, whichever its kind. */
  ingestJob(
    entry: LedgerEntry,
    extra: { campaignName?: string | null; signal?: AbortSignal } = {},
  ): Promise<IngestResult | ScenarioIngestResult> {
    if (entry.file_path === undefined || entry.status !== "completed") {
      return Promise.reject(
        new HistoryError(
          `job ${entry.job_id} has no downloaded file yet; it is added to the history once its file is downloaded.`,
          "unknown_job",
        ),
      );
    }
    const common = {
      path: entry.file_path,
      jobId: entry.job_id,
      window: { from: entry.job.from ?? null, to: entry.job.to ?? null },
      jobCreatedAt: entry.job.created_at ?? entry.requested_at,
      signal: extra.signal,
    };
    const request = entry.request;
    if (request.type === "campaign_event_data") {
      return this.ingestCampaignExport({
        ...common,
        campaignId: request.campaign_id,
        campaignName: extra.campaignName,
      });
    }
    return this.ingestScenarioExport({ ...common, scenarioId: request.scenario_id });
  }

  /**
   * Adds every downloaded file of `entries` the history does not hold yet: what a process killed
   * between a download and its ingestion left undone. One failure does not stop the others.
   */
  async catchUp(
    entries: readonly LedgerEntry[],
    signal?: AbortSignal,
  ): Promise<{ added: string[]; failed: { job_id: string; error: string }[] }> {
    const held = new Set((await this.store.read()).exports.map((e) => e.job_id));
    const added: string[] = [];
    const failed: { job_id: string; error: string }[] = [];
    for (const entry of entries) {
      if (signal?.aborted) break;
      if (held.has(entry.job_id) || entry.status !== "completed") continue;
      if (entry.file_path === undefined || !(await isRegularFile(entry.file_path))) continue;
      try {
        const result = await this.ingestJob(entry, signal === undefined ? {} : { signal });
        if (result.status === "added") added.push(entry.job_id);
      } catch (error) {
        if (signal?.aborted) break;
        const message = error instanceof Error ? error.message : String(error);
        failed.push({ job_id: entry.job_id, error: message });
        log.warn("history: an export could not be added", { job_id: entry.job_id, error: message });
      }
    }
    return { added, failed };
  }

  /**
   * Names the campaigns of `names` (campaign_id to the name campaign_metrics gives) that the
   * history holds under another name or none, in one commit (none when nothing changes).
   * Returns how many it renamed.
   */
  async nameCampaigns(names: ReadonlyMap<string, string>): Promise<number> {
    const kept = new Map<string, string>();
    for (const [campaignId, name] of names) {
      const clean = keptCampaignName(name);
      if (clean !== null) kept.set(campaignId, clean);
    }
    for (let attempt = 0; attempt < MAX_NAMING_ATTEMPTS; attempt++) {
      const base = await this.store.read();
      const putExports = renamedExports(base, kept);
      if (putExports.length === 0) return 0;
      const committed = await commitPlanned(this, { base, write: [], drop: [], putExports });
      if (committed !== undefined) return putExports.length;
    }
    throw new HistoryError(
      `the history kept changing under other processes while campaigns were being named (${MAX_NAMING_ATTEMPTS} tries); their names stay as they were. Retry shortly.`,
      "busy",
    );
  }

  /** Applies CRM_HISTORY_DAYS now. */
  prune(): Promise<PruneResult> {
    return pruneHistory(this);
  }

  /** Removes what killed processes left (run at start; every commit does it too). */
  recover(): Promise<{ files: number; staging: number }> {
    return withHistoryLock(this.folder, async () =>
      sweepHistory(this.folder, await this.store.read()),
    );
  }

  catalogue(): Promise<HistoryCatalogue> {
    return this.store.read();
  }

  async campaigns(): Promise<HistoryCampaign[]> {
    return historyCampaigns(await this.store.read());
  }

  async keptRounds(campaignId: string): Promise<KeptRound[]> {
    return keptRounds(await this.store.read(), campaignId);
  }

  close(): Promise<void> {
    return this.store.close();
  }

  /** Adds a job once in this process and, with claims, reads its file once across processes. */
  private once(
    jobId: string,
    work: () => Promise<IngestResult | ScenarioIngestResult>,
    signal: AbortSignal | undefined,
  ): Promise<IngestResult | ScenarioIngestResult> {
    let pending = this.adding.get(jobId);
    if (pending === undefined) {
      const held = async () => (await this.store.read()).exports.some((e) => e.job_id === jobId);
      const claimed =
        this.claims === undefined
          ? unclaimed(jobId, held, work)
          : withIngestClaim(this.claims, jobId, held, work, signal);
      pending = claimed.finally(() => this.adding.delete(jobId));
      this.adding.set(jobId, pending);
    }
    return pending;
  }
}
