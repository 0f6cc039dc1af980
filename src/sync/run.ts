import { DateTime } from "luxon";
import { LimitExceededError, RateLimitedError, ResourceNotReadyError } from "../api/errors.js";
import type { ExportJob } from "../api/schemas.js";
import { ExportBudgetError, ExportCallError, type ExportContext } from "../exports/errors.js";
import type { ExportRuntime } from "../exports/export-call.js";
import { followJob } from "../exports/export-flow.js";
import { type FoundJob, findOrCreateJob } from "../exports/find-or-create.js";
import { MAX_WAIT_SECONDS } from "../exports/wait-seconds.js";
import { formatCount } from "../format.js";
import type { CampaignExportRecord, History, KeptRound } from "../history/index.js";
import { sleep } from "../sleep.js";
import { campaignsInWindow, type WindowCampaign } from "./campaigns.js";
import { exportCall, wantedExport } from "./export-request.js";
import {
  type CampaignPlan,
  type HeldExport,
  halves,
  planCampaign,
  type RoundState,
} from "./plan.js";
import type { ExportItem, SyncProgress } from "./progress.js";
import type { SyncWindow } from "./window.js";

/** What a run did: the contract's fields first, then the detail behind them. */
export interface SyncReport {
  campaigns: number;
  exports_created: number;
  exports_reused: number;
  rounds_added: number;
  rows_added: number;
  waited_seconds: number;
  window: { from: string; to: string };
  /** The window's rounds by where they stood before the run (plan.ts RoundState). */
  rounds: Record<RoundState, number>;
  exports: ExportOutcome[];
  /** Campaigns asked for by --campaign that have no round in the window. */
  campaigns_without_rounds: string[];
}

export interface ExportOutcome {
  campaign_id: string;
  from: string;
  to: string;
  status: "added" | "not_ready" | "failed";
  job_id?: string;
  reused?: boolean;
  rounds_added: number;
  rows_added: number;
  error?: string;
}

export interface SyncContext {
  runtime: ExportRuntime;
  history: History;
  /** Resolves once the history has caught up with what earlier processes left. */
  settled(): Promise<void>;
  progress: SyncProgress;
  signal: AbortSignal;
  principal: string;
}

/** Exports followed at once: creation is one at a time (the budget), waiting need not be. */
const FOLLOWING_AT_ONCE = 3;
/** Temporary failures in a row while following one job before it counts as failed. */
const MAX_PROBLEMS = 10;

/**
 * Brings the history up to date for the campaigns with rounds in the window: plans each
 * campaign's missing days (plan.ts), creates or reuses their jobs one at a time within the export
 * budget (waiting for the next slot when it is spent), follows and downloads them a few at a
 * time, and adds each file to the history, awaiting its counts.
 */
export async function runSync(
  context: SyncContext,
  window: SyncWindow,
  only: readonly string[],
): Promise<SyncReport> {
  const { runtime, history, progress, signal } = context;
  const zone = runtime.config.timeZone;
  const api = await runtime.api();
  let campaigns = await campaignsInWindow(api, window, zone, signal);
  await nameHeldCampaigns(context, campaigns);
  const missingIds: string[] = [];
  if (only.length > 0) {
    const found = new Set(campaigns.map((c) => c.id));
    missingIds.push(...only.filter((id) => !found.has(id)));
    campaigns = campaigns.filter((c) => only.includes(c.id));
  }
  for (const id of missingIds) {
    progress.note(
      `${id}: no round in the window (campaign_metrics lists its rounds by scheduled time); nothing to do.`,
    );
  }
  // What a killed run downloaded but did not add is added first, so it is not asked for again.
  await context.settled();
  const report: SyncReport = {
    campaigns: campaigns.length,
    exports_created: 0,
    exports_reused: 0,
    rounds_added: 0,
    rows_added: 0,
    waited_seconds: 0,
    window: {
      from: window.from.toISO({ suppressMilliseconds: true }) as string,
      to: window.to.toISO({ suppressMilliseconds: true }) as string,
    },
    rounds: { held: 0, past_kept_days: 0, pending: 0, aggregating: 0, absent: 0, missing: 0 },
    exports: [],
    campaigns_without_rounds: missingIds,
  };
  const queue: ExportItem[] = [];
  for (const campaign of campaigns) {
    const plan = await planFor(history, campaign, runtime.now(), zone);
    for (const [state, count] of Object.entries(plan.states)) {
      report.rounds[state as RoundState] += count;
    }
    for (const planned of plan.exports) {
      queue.push({ campaign, from: planned.from, to: planned.to, missing: planned.missing });
    }
  }
  progress.planned(queue.length, campaigns.length);
  const following = new Set<Promise<void>>();
  while (queue.length > 0) {
    if (signal.aborted) break;
    const item = queue.shift() as ExportItem;
    const found = await createOrReuse(context, item, report, queue);
    if (found === undefined) continue;
    const work = finish(context, item, found, report).finally(() => following.delete(work));
    following.add(work);
    if (following.size >= FOLLOWING_AT_ONCE) await Promise.race(following);
  }
  await Promise.all(following);
  signal.throwIfAborted();
  return report;
}

/**
 * The names campaign_metrics gave, for the campaigns the history already holds (an export the
 * server added while the name was out of reach, or a campaign renamed since): no request more.
 */
async function nameHeldCampaigns(
  context: SyncContext,
  campaigns: readonly WindowCampaign[],
): Promise<void> {
  try {
    await context.history.nameCampaigns(new Map(campaigns.map((c) => [c.id, c.name])));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    context.progress.note(`campaign names not updated in the history: ${message}`);
  }
}

async function planFor(
  history: History,
  campaign: WindowCampaign,
  now: number,
  zone: string,
): Promise<CampaignPlan> {
  const catalogue = await history.catalogue();
  const exports: HeldExport[] = catalogue.exports
    .filter(
      (e): e is CampaignExportRecord =>
        e.kind === "campaign_event_data" && e.campaign_id === campaign.id,
    )
    .map((e) => ({
      fromDate: zoneDate(e.window.from, zone),
      toDate: zoneDate(e.window.to, zone),
      createdAt: Date.parse(e.job_created_at),
    }));
  return planCampaign({
    rounds: campaign.rounds,
    held: await history.keptRounds(campaign.id),
    exports,
    now,
    cutoff: history.cutoff(),
  });
}

function zoneDate(iso: string | null, zone: string): string | null {
  if (iso === null) return null;
  const t = DateTime.fromISO(iso, { setZone: true });
  return t.isValid ? (t.setZone(zone).toISODate() as string) : null;
}

/**
 * The item's job: an identical one the ledger holds (reused), else a new one within the budget.
 * Undefined when nothing is to follow (not ready, split in two, failed: the report says which).
 */
async function createOrReuse(
  context: SyncContext,
  item: ExportItem,
  report: SyncReport,
  queue: ExportItem[],
): Promise<FoundJob | undefined> {
  const { runtime, progress } = context;
  const wanted = wantedExport(item, runtime.config.timeZone, runtime.now());
  const call = exportCall(context, item);
  progress.step(item, "creating the export job");
  for (;;) {
    try {
      let found = await findOrCreateJob(runtime, call, wanted, false);
      // A reused job the history already holds lacked these rounds: only a new job can have them.
      if (found.reusedCreatedAt !== undefined && (await isHeld(context.history, found.job._id))) {
        found = await findOrCreateJob(runtime, call, wanted, true);
      }
      if (found.reusedCreatedAt === undefined) report.exports_created += 1;
      else report.exports_reused += 1;
      const verb = found.reusedCreatedAt === undefined ? "created" : "reused";
      progress.step(item, `job ${found.job._id} ${verb}`);
      return found;
    } catch (error) {
      if (error instanceof ExportBudgetError) {
        report.waited_seconds += await waitForSlot(context, error.nextSlotAt);
        continue;
      }
      const apiError = error instanceof ExportCallError ? error.apiError : undefined;
      // The ledger stored the 429's wait: the next reservation is refused until then.
      if (apiError instanceof RateLimitedError) continue;
      if (apiError instanceof LimitExceededError) {
        const parts = halves(item, runtime.config.timeZone);
        if (parts !== undefined) {
          progress.done(item, `too large for one export (${apiError.message}); split in two`);
          queue.unshift(...parts.map((p) => ({ ...item, ...p })));
          progress.planned(1, undefined);
          return undefined;
        }
      }
      if (apiError instanceof ResourceNotReadyError) {
        report.exports.push(outcome(item, "not_ready"));
        progress.done(
          item,
          "not ready: no round of these days has finished its aggregation; a later sync adds them",
        );
        return undefined;
      }
      if (context.signal.aborted) throw error;
      fail(context, item, report, error, undefined);
      return undefined;
    }
  }
}

/** Follows the job to its file, adds the file to the history and counts what it added. */
async function finish(
  context: SyncContext,
  item: ExportItem,
  found: FoundJob,
  report: SyncReport,
): Promise<void> {
  const reused = found.reusedCreatedAt !== undefined;
  try {
    const job = await followToFile(context, item, found.job);
    const entry = await context.runtime.ledger.get(job._id);
    if (entry === undefined) throw new Error(`export job ${job._id} is missing from the ledger`);
    context.progress.step(item, "adding to the history");
    const before = new Set((await context.history.keptRounds(item.campaign.id)).map(roundKey));
    await context.history.ingestJob(entry, {
      campaignName: item.campaign.name,
      signal: context.signal,
    });
    const added = (await context.history.keptRounds(item.campaign.id)).filter(
      (r) => r.job_id === job._id && !before.has(roundKey(r)),
    );
    const rows = added.reduce((sum, r) => sum + r.rows, 0);
    report.rounds_added += added.length;
    report.rows_added += rows;
    report.exports.push({
      ...outcome(item, "added"),
      job_id: job._id,
      reused,
      rounds_added: added.length,
      rows_added: rows,
    });
    context.progress.done(
      item,
      `job ${job._id} (${reused ? "reused" : "created"}): ${added.length} round(s) and ${formatCount(rows)} row(s) added`,
    );
  } catch (error) {
    if (context.signal.aborted) return;
    fail(context, item, report, error, { job_id: found.job._id, reused });
  }
}

async function followToFile(
  context: SyncContext,
  item: ExportItem,
  job: ExportJob,
): Promise<ExportJob> {
  const call = exportCall(context, item);
  const exportContext: ExportContext = {
    type: "campaign_event_data",
    targetId: item.campaign.id,
    jobId: job._id,
  };
  let current = job;
  let problems = 0;
  for (;;) {
    const outcome = await followJob(
      context.runtime,
      current,
      MAX_WAIT_SECONDS,
      call,
      exportContext,
    );
    current = outcome.job;
    if (outcome.download !== undefined) return current;
    if (outcome.problem === undefined) problems = 0;
    else if (++problems >= MAX_PROBLEMS) throw outcome.problem;
    else await sleep(context.runtime.config.pollIntervalSeconds * 1000, context.signal);
  }
}

function fail(
  context: SyncContext,
  item: ExportItem,
  report: SyncReport,
  error: unknown,
  job: { job_id: string; reused: boolean } | undefined,
): void {
  const message = error instanceof Error ? error.message : String(error);
  report.exports.push({ ...outcome(item, "failed"), ...job, error: message });
  context.progress.done(item, `failed: ${message}`);
}

function outcome(item: ExportItem, status: ExportOutcome["status"]): ExportOutcome {
  return {
    campaign_id: item.campaign.id,
    from: item.from,
    to: item.to,
    status,
    rounds_added: 0,
    rows_added: 0,
  };
}

/** Sleeps until the budget's next slot; returns the seconds waited. */
async function waitForSlot(context: SyncContext, nextSlotAt: number): Promise<number> {
  const { runtime, progress } = context;
  const ms = Math.max(250, nextSlotAt - runtime.now());
  const at = new Date(Date.now() + ms).toISOString().replace(/\.\d{3}Z$/, "Z");
  const budget = await runtime.ledger.budgetStatus();
  progress.note(
    `export budget spent (${budget.used} of ${budget.limit} creations${budget.serverRateLimited ? ", and the service asked to wait" : ""}); waiting until ${at} (${Math.ceil(ms / 1000)} s) for the next slot`,
  );
  const started = Date.now();
  await sleep(ms, context.signal);
  return Math.round((Date.now() - started) / 1000);
}

async function isHeld(history: History, jobId: string): Promise<boolean> {
  return (await history.catalogue()).exports.some((e) => e.job_id === jobId);
}

function roundKey(round: KeptRound): string {
  return JSON.stringify([round.task_id, round.scheduled_at, round.group]);
}
