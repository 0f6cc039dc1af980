import { createHash } from "node:crypto";
import { readFile, rename } from "node:fs/promises";
import { join } from "node:path";
import type { CreateExportJobRequest, ExportJob } from "../api/schemas.js";
import { writeFileAtomic } from "../file-io/atomic-file.js";
import { withFileLock } from "../file-io/file-lock.js";
import { log } from "../log.js";
import { type BudgetStatus, budgetStatus, type ExportBudget } from "./budget.js";
import { downloaded, type EntryEdit, fileRemoved, jobSeen, markedLost, newEntry } from "./entry.js";
import { claimInFile, releaseInFile, renewInFile } from "./file-claims.js";
import { emptyFile, type LedgerFile, MAX_JOBS, parseLedger } from "./ledger-file.js";
import { ClaimJudge, type ClaimOwner, type ClaimResult } from "./pending-creation.js";
import {
  type CreateReservation,
  type GrantedReservation,
  type LedgerEntry,
  type LedgerStore,
  pickReusable,
  type ReuseOptions,
  withFilePresent,
} from "./store.js";

export { safeJob } from "./entry.js";
export type { CreateReservation, LedgerEntry, LedgerStore, ReuseOptions } from "./store.js";

/**
 * The ledger scope of one service and application: jobs, budget and files of another application
 * (or of the sandbox while in remote mode) are never listed, counted or reused. `service` is the
 * base URL, or "sandbox".
 */
export function ledgerScope(service: string, applicationId: string | undefined): string {
  return createHash("sha256")
    .update(`${service}\n${applicationId ?? ""}`)
    .digest("hex")
    .slice(0, 12);
}

/**
 * The persistent record of export jobs in CRM_DATA_DIR (the default LedgerStore). Every operation re-reads the small file,
 * so two server processes sharing a data folder see each other's jobs and budget; writes are
 * atomic (see writeFileAtomic) and serialized within the process.
 */
export class JobLedger implements LedgerStore {
  readonly path: string;
  readonly location: string;
  private readonly budget: ExportBudget;
  private readonly now: () => number;
  private queue: Promise<unknown> = Promise.resolve();
  /** Problems met while reading (a corrupt file moved aside, bad entries skipped). */
  readonly warnings: string[] = [];

  /** Other processes' pending creations as this process has seen them. */
  private readonly claims: ClaimJudge;

  /**
   * `scope` (see ledgerScope) gives every service and application its own file; `monotonic`
   * (default performance.now) is the clock pending creations are judged by.
   */
  constructor(
    dataDir: string,
    budget: ExportBudget,
    now: () => number,
    scope: string,
    monotonic?: () => number,
  ) {
    this.path = join(dataDir, `export-jobs-${scope}.json`);
    this.location = this.path;
    this.budget = budget;
    this.now = now;
    this.claims = new ClaimJudge(monotonic);
  }

  /** Most recently created first. */
  async list(limit = 20): Promise<LedgerEntry[]> {
    const file = await this.read();
    return [...file.jobs].reverse().slice(0, limit);
  }

  async count(): Promise<number> {
    return (await this.read()).jobs.length;
  }

  /** A listing in one read: the newest `limit` entries, how many there are, and the budget. */
  async recent(
    limit: number,
  ): Promise<{ entries: LedgerEntry[]; total: number; budget: BudgetStatus }> {
    const file = await this.read();
    return {
      entries: [...file.jobs].reverse().slice(0, limit),
      total: file.jobs.length,
      budget: budgetStatus(file.create_calls, file.rate_limited_until, this.budget, this.now()),
    };
  }

  async get(jobId: string): Promise<LedgerEntry | undefined> {
    return (await this.read()).jobs.find((j) => j.job_id === jobId);
  }

  /** The warnings not yet shown; each is returned once. */
  takeWarnings(): string[] {
    return this.warnings.splice(0, this.warnings.length);
  }

  /**
   * The newest completed job for the same request that still answers it: its file is on disk or
   * its download URL is valid, and its data cannot have grown since (see ReuseOptions).
   * `undefined` when a new job is needed.
   */
  async findReusable(
    requestKey: string,
    options: ReuseOptions = {},
  ): Promise<LedgerEntry | undefined> {
    const candidates = (await this.read()).jobs.filter((j) => j.request_key === requestKey);
    return pickReusable(candidates.reverse(), this.now(), options);
  }

  async budgetStatus(): Promise<BudgetStatus> {
    const file = await this.read();
    return budgetStatus(file.create_calls, file.rate_limited_until, this.budget, this.now());
  }

  /**
   * Checks the budget and, when a creation is allowed, records it, in one locked step: parallel
   * calls (in this process or another) cannot all pass the check before any of them records.
   */
  async reserveCreate(): Promise<CreateReservation> {
    const windowMs = this.budget.windowSeconds * 1000;
    let reservation: CreateReservation | undefined;
    await this.mutate((file) => {
      const at = this.now();
      const status = budgetStatus(file.create_calls, file.rate_limited_until, this.budget, at);
      if (!status.allowed) {
        reservation = { reserved: false, status };
        return;
      }
      file.create_calls = [...file.create_calls.filter((t) => t > at - windowMs), at];
      reservation = {
        reserved: true,
        status: budgetStatus(file.create_calls, file.rate_limited_until, this.budget, at),
        at,
      };
    });
    if (reservation === undefined) throw new Error("ledger reservation did not run");
    return reservation;
  }

  /** Removes the reservation's stamp (one of them, should two calls share a millisecond). */
  async refundCreate(reservation: GrantedReservation): Promise<void> {
    await this.mutate((file) => {
      const index = file.create_calls.indexOf(reservation.at);
      if (index >= 0) file.create_calls.splice(index, 1);
    });
  }

  async claimCreate(requestKey: string, owner: ClaimOwner): Promise<ClaimResult> {
    let result: ClaimResult | undefined;
    await this.mutate((file) => {
      result = claimInFile(file, requestKey, owner, this.claims);
    });
    if (result === undefined) throw new Error("ledger claim did not run");
    return result;
  }

  async renewCreateClaim(requestKey: string, owner: ClaimOwner): Promise<void> {
    await this.mutate((file) => renewInFile(file, requestKey, owner));
  }

  async releaseCreateClaim(requestKey: string, owner: ClaimOwner): Promise<void> {
    await this.mutate((file) => releaseInFile(file, requestKey, owner));
  }

  /** The service no longer knows this job: it is kept for the record but never reused. */
  async markLost(jobId: string): Promise<void> {
    await this.edit(jobId, markedLost(this.nowIso()));
  }

  async recordRateLimit(retryAfterMs: number | undefined): Promise<void> {
    // Without Retry-After, assume the whole window; the service gave no better hint.
    const until = this.now() + (retryAfterMs ?? this.budget.windowSeconds * 1000);
    await this.mutate((file) => {
      file.rate_limited_until = Math.max(file.rate_limited_until ?? 0, until);
    });
  }

  async recordCreated(
    request: CreateExportJobRequest,
    requestKey: string,
    job: ExportJob,
    createdBy?: string,
  ): Promise<LedgerEntry> {
    const entry = newEntry(request, requestKey, job, createdBy, new Date(this.now()).toISOString());
    await this.mutate((file) => {
      file.jobs = [...file.jobs.filter((j) => j.job_id !== job._id), entry].slice(-MAX_JOBS);
    });
    return entry;
  }

  /** Stores the latest job object; returns the entry, or undefined for a job we did not create. */
  async updateJob(job: ExportJob): Promise<LedgerEntry | undefined> {
    return this.edit(job._id, jobSeen(job, this.nowIso()));
  }

  async recordDownload(jobId: string, path: string, bytes: number): Promise<void> {
    await this.edit(jobId, downloaded(path, bytes, this.nowIso()));
  }

  /**
   * Records that the retention sweep removed these files: the entries keep their history (and
   * the path, for the record), marked so nobody looks for the file again.
   */
  async markFilesRemoved(
    removed: ReadonlyArray<{ path: string; reason: "age" | "size" }>,
  ): Promise<number> {
    const byPath = new Map(removed.map((r) => [r.path, r.reason]));
    const at = this.nowIso();
    let marked = 0;
    await this.mutate((file) => {
      for (const entry of file.jobs) {
        const reason = entry.file_path === undefined ? undefined : byPath.get(entry.file_path);
        if (reason === undefined || entry.file_removed_at !== undefined) continue;
        fileRemoved(reason, at)(entry);
        marked += 1;
      }
    });
    return marked;
  }

  /** Downloaded files that still exist, newest first (listed as MCP resources). */
  async downloadedFiles(): Promise<LedgerEntry[]> {
    return withFilePresent(
      (await this.read()).jobs.filter((j) => j.file_path !== undefined).reverse(),
    );
  }

  async acquireDownloadLease(
    jobId: string,
    holder: string,
    ttlMs: number,
    abandoned?: (holder: string) => boolean,
  ): Promise<boolean> {
    let granted = false;
    await this.mutate((file) => {
      const at = this.now();
      const leases = file.download_leases ?? {};
      const current = leases[jobId];
      if (
        current !== undefined &&
        current.holder !== holder &&
        current.expires > at &&
        abandoned?.(current.holder) !== true
      ) {
        return;
      }
      // Expired leases of other jobs go with this write; the file stays small.
      const kept = Object.entries(leases).filter(([id, l]) => id !== jobId && l.expires > at);
      file.download_leases = Object.fromEntries([
        ...kept,
        [jobId, { holder, expires: at + ttlMs }],
      ]);
      granted = true;
    });
    return granted;
  }

  async releaseDownloadLease(jobId: string, holder: string): Promise<void> {
    await this.mutate((file) => {
      const leases = file.download_leases;
      if (leases?.[jobId]?.holder !== holder) return;
      delete leases[jobId];
      if (Object.keys(leases).length === 0) file.download_leases = undefined;
    });
  }

  async close(): Promise<void> {
    await this.queue;
  }

  /**
   * Read, change, write under the in-process queue and the cross-process lock, so no update of
   * another process is lost. Nothing is written when the change left the file as it was (a poll
   * that saw no news).
   */
  /** Applies one edit to one entry under the lock; undefined for a job we did not create. */
  private async edit(jobId: string, change: EntryEdit): Promise<LedgerEntry | undefined> {
    let edited: LedgerEntry | undefined;
    await this.mutate((file) => {
      edited = file.jobs.find((j) => j.job_id === jobId);
      if (edited !== undefined) change(edited);
    });
    return edited;
  }

  private nowIso(): string {
    return new Date(this.now()).toISOString();
  }

  private mutate(change: (file: LedgerFile) => void): Promise<void> {
    const run = this.queue.then(() =>
      withFileLock(this.path, async () => {
        const file = await this.read();
        const before = JSON.stringify(file);
        change(file);
        if (JSON.stringify(file) === before) return;
        await writeFileAtomic(this.path, `${JSON.stringify(file, null, 1)}\n`);
      }),
    );
    // A failed write must not wedge later writes; the caller still sees the error.
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async read(): Promise<LedgerFile> {
    let text: string;
    try {
      text = await readFile(this.path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return emptyFile();
      throw error;
    }
    const parsed = parseLedger(text);
    if (parsed !== undefined) {
      if (parsed.skipped > 0) {
        this.warnOnce(
          `${parsed.skipped} unreadable entr${parsed.skipped === 1 ? "y" : "ies"} in the export-job ledger ${this.path} ${parsed.skipped === 1 ? "was" : "were"} skipped.`,
        );
      }
      return parsed.file;
    }
    const backup = `${this.path}.corrupt-${this.now()}`;
    try {
      await rename(this.path, backup);
    } catch {
      // Another process may have moved it already; starting fresh is still right.
    }
    const warning = `The export-job ledger at ${this.path} could not be read; it was kept as ${backup} and a new one was started.`;
    this.warnOnce(warning);
    return emptyFile();
  }

  private readonly warned = new Set<string>();

  private warnOnce(warning: string): void {
    if (this.warned.has(warning)) return;
    this.warned.add(warning);
    this.warnings.push(warning);
    log.warn(warning);
  }
}
