import type { LedgerStore } from "../ledger/store.js";
import { log } from "../log.js";
import type { CampaignNames } from "./campaign-names.js";
import type { History } from "./history.js";

/**
 * Unnamed campaigns looked up (one campaign_metrics request each) when a process catches up:
 * a history filled while names were out of reach is named over a few starts, never in a burst.
 */
const NAME_LOOKUPS_AT_CATCH_UP = 5;

/**
 * Where one job's file stands in the history, for check_export: `kept` once the catalogue holds
 * it (added by any process), `adding` while this process adds it, `failed` when this process
 * could not (the message says why and what to do), `waiting` before any of that.
 */
export interface HistoryStatus {
  status: "kept" | "adding" | "failed" | "waiting";
  error?: string;
}

/**
 * The history as a server process uses it: opened on first use, brought up to date at open
 * (what a killed process left: its staging swept, downloaded files it never added added now),
 * and fed each file this process downloads, in the background: adding a file never delays the
 * tool call that downloaded it, and a file that cannot be added is logged and reported by
 * check_export, never thrown at a caller. A campaign it adds without a name is named from
 * `names` (campaign-names.ts) before the addition counts as done; a name that cannot be found
 * stays unknown and never fails the addition.
 */
export class HistoryKeeper {
  private opened: Promise<History | undefined> | undefined;
  private readonly adding = new Map<string, Promise<void>>();
  private readonly failures = new Map<string, string>();
  private readonly controller = new AbortController();
  private catchingUp: Promise<void> | undefined;

  constructor(
    /** Opens the history; undefined when CRM_HISTORY=off. */
    private readonly open: () => Promise<History | undefined>,
    private readonly ledger: Pick<LedgerStore, "get" | "downloadedFiles">,
    /** Where campaign names come from; without it, added campaigns stay unnamed. */
    private readonly names?: CampaignNames | undefined,
  ) {}

  /** The history, or undefined with CRM_HISTORY=off. The first call starts the catch-up. */
  history(): Promise<History | undefined> {
    if (this.opened === undefined) {
      const opened = this.open();
      this.opened = opened;
      opened.then(
        (history) => {
          if (history !== undefined) this.catchingUp = this.catchUp(history);
        },
        (error: unknown) => {
          // The next use tries again: a database that was away may be back.
          if (this.opened === opened) this.opened = undefined;
          log.warn("history: could not be opened", { error: messageOf(error) });
        },
      );
    }
    return this.opened;
  }

  /** Adds the job's downloaded file in the background; a second call while it runs joins it. */
  add(jobId: string): void {
    if (this.controller.signal.aborted || this.adding.has(jobId)) return;
    this.failures.delete(jobId);
    const work = this.addNow(jobId).finally(() => this.adding.delete(jobId));
    this.adding.set(jobId, work);
  }

  async status(jobId: string): Promise<HistoryStatus | undefined> {
    const history = await this.history().catch(() => undefined);
    if (history === undefined) return undefined;
    const failure = this.failures.get(jobId);
    if (failure !== undefined) return { status: "failed", error: failure };
    if (this.adding.has(jobId)) return { status: "adding" };
    const catalogue = await history.catalogue();
    return catalogue.exports.some((e) => e.job_id === jobId)
      ? { status: "kept" }
      : { status: "waiting" };
  }

  /** Resolves once every addition started so far (and the opening catch-up) has ended. */
  async settled(): Promise<void> {
    await this.opened?.catch(() => undefined);
    await this.catchingUp;
    while (this.adding.size > 0) await Promise.allSettled([...this.adding.values()]);
  }

  /**
   * Stops the additions under way (a stopped one leaves its staging folder, which the next
   * start sweeps: no partial round is ever committed) and closes the catalogue.
   */
  async close(): Promise<void> {
    this.controller.abort();
    const opened = this.opened;
    await this.settled();
    const history = await opened?.catch(() => undefined);
    await history?.close();
  }

  private async addNow(jobId: string): Promise<void> {
    try {
      const history = await this.history();
      if (history === undefined) return;
      const entry = await this.ledger.get(jobId);
      if (entry === undefined) return;
      const request = entry.request;
      const campaignId = request.type === "campaign_event_data" ? request.campaign_id : undefined;
      const result = await history.ingestJob(entry, {
        campaignName: campaignId === undefined ? undefined : this.names?.remembered(campaignId),
        signal: this.controller.signal,
      });
      if (result.status === "added") log.info("history: export added", { job_id: jobId });
      if (campaignId !== undefined) await this.nameUnnamed(history, [campaignId]);
    } catch (error) {
      if (this.controller.signal.aborted) return;
      const message = messageOf(error);
      this.failures.set(jobId, message);
      log.warn("history: an export could not be added", { job_id: jobId, error: message });
    }
  }

  private async catchUp(history: History): Promise<void> {
    try {
      await history.recover();
      await history.prune();
      const entries = await this.ledger.downloadedFiles();
      const { failed } = await history.catchUp(entries, this.controller.signal);
      for (const { job_id, error } of failed) this.failures.set(job_id, error);
      await this.nameUnnamed(history, undefined, NAME_LOOKUPS_AT_CATCH_UP);
    } catch (error) {
      if (this.controller.signal.aborted) return;
      log.warn("history: catching up failed", { error: messageOf(error) });
    }
  }

  /**
   * Names the history's unnamed campaigns (of `only`, or all), each from the names this process
   * saw or, for at most `lookups` of them, one campaign_metrics request around its newest round.
   * Never throws: a name not found stays unknown, for a later addition, start or `sync`.
   */
  private async nameUnnamed(
    history: History,
    only: readonly string[] | undefined,
    lookups = Number.POSITIVE_INFINITY,
  ): Promise<void> {
    if (this.names === undefined) return;
    try {
      const unnamed = (await history.campaigns()).filter(
        (c) => c.name === null && (only === undefined || only.includes(c.campaign_id)),
      );
      const found = new Map<string, string>();
      let asked = 0;
      for (const campaign of unnamed) {
        if (this.controller.signal.aborted) return;
        let name = this.names.remembered(campaign.campaign_id);
        if (name === undefined && asked < lookups) {
          asked += 1;
          name = await this.names.find(
            campaign.campaign_id,
            campaign.last_scheduled_at,
            this.controller.signal,
          );
        }
        if (name !== undefined) found.set(campaign.campaign_id, name);
      }
      if (found.size > 0) await history.nameCampaigns(found);
    } catch (error) {
      if (this.controller.signal.aborted) return;
      log.warn("history: campaigns could not be named (their names stay unknown)", {
        error: messageOf(error),
      });
    }
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
