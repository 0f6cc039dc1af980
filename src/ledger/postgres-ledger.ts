import type { PoolClient } from "pg";
import type { CreateExportJobRequest, ExportJob } from "../api/schemas.js";
import { log } from "../log.js";
import { type BudgetStatus, budgetStatus, type ExportBudget } from "./budget.js";
import { downloaded, type EntryEdit, fileRemoved, jobSeen, markedLost, newEntry } from "./entry.js";
import { ClaimJudge, type ClaimOwner, type ClaimResult } from "./pending-creation.js";
import { PostgresClaims } from "./postgres-claims.js";
import type { LaterWrite, PostgresConnection } from "./postgres-pool.js";
import { numberOrUndefined } from "./postgres-pool.js";
import {
  type CreateReservation,
  type GrantedReservation,
  type LedgerEntry,
  type LedgerStore,
  pickReusable,
  type ReuseOptions,
  withFilePresent,
} from "./store.js";

/**
 * The export-job ledger and budget in PostgreSQL (CRM_DATABASE_URL), shared by every server
 * process that uses the database: a team's servers behind a load balancer count one budget and
 * reuse each other's jobs. Each change is one transaction; the budget is checked and recorded
 * under a row lock on the scope's budget row, so no number of processes can overdraw it. Times
 * are the servers' clock (epoch ms), as in the file ledger, so keep the servers' clocks in sync.
 */
export class PostgresLedger implements LedgerStore {
  readonly location: string;
  private readonly claims: PostgresClaims;

  /**
   * On the process's connection to the database (which connects on first use; its opener
   * closes it); `scope` as for the file ledger.
   */
  constructor(
    private readonly db: PostgresConnection,
    private readonly budget: ExportBudget,
    private readonly now: () => number,
    private readonly scope: string,
    /** The clock pending creations are judged by (default performance.now). */
    monotonic?: () => number,
  ) {
    this.location = db.location;
    this.claims = new PostgresClaims(db, scope, new ClaimJudge(monotonic));
  }

  async list(limit = 20): Promise<LedgerEntry[]> {
    const rows = await this.query<{ entry: LedgerEntry }>(
      "SELECT entry FROM crm_export_jobs WHERE scope = $1 ORDER BY seq DESC LIMIT $2",
      [this.scope, limit],
    );
    return rows.map((r) => r.entry);
  }

  async count(): Promise<number> {
    const rows = await this.query<{ n: string }>(
      "SELECT count(*) AS n FROM crm_export_jobs WHERE scope = $1",
      [this.scope],
    );
    return Number(rows[0]?.n ?? 0);
  }

  async recent(
    limit: number,
  ): Promise<{ entries: LedgerEntry[]; total: number; budget: BudgetStatus }> {
    const [entries, total, budget] = await Promise.all([
      this.list(limit),
      this.count(),
      this.budgetStatus(),
    ]);
    return { entries, total, budget };
  }

  async get(jobId: string): Promise<LedgerEntry | undefined> {
    const rows = await this.query<{ entry: LedgerEntry }>(
      "SELECT entry FROM crm_export_jobs WHERE scope = $1 AND job_id = $2",
      [this.scope, jobId],
    );
    return rows[0]?.entry;
  }

  takeWarnings(): string[] {
    return [];
  }

  async findReusable(
    requestKey: string,
    options: ReuseOptions = {},
  ): Promise<LedgerEntry | undefined> {
    const rows = await this.query<{ entry: LedgerEntry }>(
      `SELECT entry FROM crm_export_jobs
       WHERE scope = $1 AND request_key = $2 AND status = 'completed'
       ORDER BY seq DESC LIMIT 50`,
      [this.scope, requestKey],
    );
    return pickReusable(
      rows.map((r) => r.entry),
      this.now(),
      options,
    );
  }

  async budgetStatus(): Promise<BudgetStatus> {
    const at = this.now();
    const [calls, until] = await Promise.all([
      this.query<{ at: string }>(
        "SELECT at FROM crm_export_create_calls WHERE scope = $1 AND at > $2",
        [this.scope, at - this.budget.windowSeconds * 1000],
      ),
      this.query<{ rate_limited_until: string | null }>(
        "SELECT rate_limited_until FROM crm_export_budget WHERE scope = $1",
        [this.scope],
      ),
    ]);
    return budgetStatus(
      calls.map((c) => Number(c.at)),
      numberOrUndefined(until[0]?.rate_limited_until),
      this.budget,
      at,
    );
  }

  async reserveCreate(): Promise<CreateReservation> {
    // Whether a reservation whose COMMIT went unanswered counts is unknown; no creation is sent
    // for it, so one slot of its stamp is given back once the database answers: none when it
    // never counted, unless another creation has the same millisecond's stamp.
    const undo = (result: CreateReservation) =>
      result.reserved ? this.refundWrite(result.at) : undefined;
    return this.transaction(async (client) => {
      // The scope's budget row is the lock every reservation of every process queues on.
      await client.query(
        "INSERT INTO crm_export_budget (scope) VALUES ($1) ON CONFLICT (scope) DO NOTHING",
        [this.scope],
      );
      const locked = await client.query<{ rate_limited_until: string | null }>(
        "SELECT rate_limited_until FROM crm_export_budget WHERE scope = $1 FOR UPDATE",
        [this.scope],
      );
      const at = this.now();
      const windowMs = this.budget.windowSeconds * 1000;
      // Calls long out of any window are dropped; two windows back leaves room for clock skew.
      await client.query("DELETE FROM crm_export_create_calls WHERE scope = $1 AND at <= $2", [
        this.scope,
        at - 2 * windowMs,
      ]);
      const calls = await client.query<{ at: string }>(
        "SELECT at FROM crm_export_create_calls WHERE scope = $1 AND at > $2",
        [this.scope, at - windowMs],
      );
      const times = calls.rows.map((c) => Number(c.at));
      const until = numberOrUndefined(locked.rows[0]?.rate_limited_until);
      const status = budgetStatus(times, until, this.budget, at);
      if (!status.allowed) return { reserved: false, status };
      await client.query("INSERT INTO crm_export_create_calls (scope, at) VALUES ($1, $2)", [
        this.scope,
        at,
      ]);
      return {
        reserved: true,
        status: budgetStatus([...times, at], until, this.budget, at),
        at,
      };
    }, undo);
  }

  async refundCreate(reservation: GrantedReservation): Promise<void> {
    // Given back even across an outage: the budget counts only what reached the service.
    await this.db.writeBehind(this.refundWrite(reservation.at));
  }

  /** Gives back the budget slot stamped `at`. */
  private refundWrite(at: number): LaterWrite {
    return {
      what: `export budget slot ${at} given back`,
      write: (db) =>
        db.transaction(async (client) => {
          // Queued on the budget row like reservations, so a refund and a reservation never
          // interleave; one row of the stamp goes (two calls may share a millisecond).
          await client.query("SELECT 1 FROM crm_export_budget WHERE scope = $1 FOR UPDATE", [
            this.scope,
          ]);
          await client.query(
            `DELETE FROM crm_export_create_calls WHERE ctid = (
               SELECT ctid FROM crm_export_create_calls WHERE scope = $1 AND at = $2 LIMIT 1)`,
            [this.scope, at],
          );
        }),
    };
  }

  claimCreate(requestKey: string, owner: ClaimOwner): Promise<ClaimResult> {
    return this.claims.claim(requestKey, owner);
  }

  renewCreateClaim(requestKey: string, owner: ClaimOwner): Promise<void> {
    return this.claims.renew(requestKey, owner);
  }

  releaseCreateClaim(requestKey: string, owner: ClaimOwner): Promise<void> {
    return this.claims.release(requestKey, owner);
  }

  async markLost(jobId: string): Promise<void> {
    await this.change(jobId, markedLost(this.nowIso()));
  }

  async recordRateLimit(retryAfterMs: number | undefined): Promise<void> {
    // Without Retry-After, assume the whole window; the service gave no better hint.
    const until = this.now() + (retryAfterMs ?? this.budget.windowSeconds * 1000);
    await this.query(
      `INSERT INTO crm_export_budget (scope, rate_limited_until) VALUES ($1, $2)
       ON CONFLICT (scope) DO UPDATE SET rate_limited_until =
         GREATEST(COALESCE(crm_export_budget.rate_limited_until, 0), EXCLUDED.rate_limited_until)`,
      [this.scope, until],
    );
  }

  async recordCreated(
    request: CreateExportJobRequest,
    requestKey: string,
    job: ExportJob,
    createdBy?: string,
  ): Promise<LedgerEntry> {
    const entry = newEntry(request, requestKey, job, createdBy, new Date(this.now()).toISOString());
    // The service has made the job: during an outage its entry waits in memory and is written
    // before any later statement, so a retried call joins this job instead of making another.
    const written = await this.db.writeBehind({
      what: `export job ${job._id}`,
      // A job ID seen again (a sandbox restarted with the same IDs) starts over as the newest.
      write: (db) =>
        db.query(
          `INSERT INTO crm_export_jobs (scope, job_id, request_key, status, created_by, entry)
           VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (scope, job_id) DO UPDATE SET request_key = EXCLUDED.request_key,
             status = EXCLUDED.status, created_by = EXCLUDED.created_by, entry = EXCLUDED.entry,
             seq = nextval('crm_export_jobs_order')`,
          [this.scope, job._id, requestKey, job.status, createdBy ?? null, entry],
        ),
    });
    if (!written) {
      log.warn("export job kept in memory until the database answers again", {
        job_id: job._id,
        database: this.location,
      });
    }
    return entry;
  }

  async updateJob(job: ExportJob): Promise<LedgerEntry | undefined> {
    return this.change(job._id, jobSeen(job, this.nowIso()));
  }

  async recordDownload(jobId: string, path: string, bytes: number): Promise<void> {
    await this.change(jobId, downloaded(path, bytes, this.nowIso()));
  }

  async markFilesRemoved(
    removed: ReadonlyArray<{ path: string; reason: "age" | "size" }>,
  ): Promise<number> {
    if (removed.length === 0) return 0;
    const byPath = new Map(removed.map((r) => [r.path, r.reason]));
    const at = this.nowIso();
    return this.transaction(async (client) => {
      const rows = await client.query<{ job_id: string; entry: LedgerEntry }>(
        `SELECT job_id, entry FROM crm_export_jobs
         WHERE scope = $1 AND entry->>'file_path' = ANY($2::text[])
           AND NOT entry ? 'file_removed_at'
         FOR UPDATE`,
        [this.scope, [...byPath.keys()]],
      );
      let marked = 0;
      for (const { job_id, entry } of rows.rows) {
        const reason = byPath.get(entry.file_path ?? "");
        if (reason === undefined) continue;
        marked += 1;
        fileRemoved(reason, at)(entry);
        await client.query(
          "UPDATE crm_export_jobs SET entry = $3 WHERE scope = $1 AND job_id = $2",
          [this.scope, job_id, entry],
        );
      }
      return marked;
    });
  }

  async downloadedFiles(): Promise<LedgerEntry[]> {
    const rows = await this.query<{ entry: LedgerEntry }>(
      `SELECT entry FROM crm_export_jobs WHERE scope = $1 AND entry ? 'file_path'
       ORDER BY seq DESC LIMIT 500`,
      [this.scope],
    );
    return withFilePresent(rows.map((r) => r.entry));
  }

  async acquireDownloadLease(
    jobId: string,
    holder: string,
    ttlMs: number,
    abandoned?: (holder: string) => boolean,
  ): Promise<boolean> {
    const at = this.now();
    const rows = await this.query(
      `INSERT INTO crm_download_leases (scope, job_id, holder, expires) VALUES ($1, $2, $3, $4)
       ON CONFLICT (scope, job_id) DO UPDATE SET holder = EXCLUDED.holder, expires = EXCLUDED.expires
       WHERE crm_download_leases.holder = EXCLUDED.holder OR crm_download_leases.expires <= $5
       RETURNING holder`,
      [this.scope, jobId, holder, at + ttlMs, at],
    );
    if (rows.length === 1) return true;
    if (abandoned === undefined) return false;
    const current = await this.query<{ holder: string }>(
      "SELECT holder FROM crm_download_leases WHERE scope = $1 AND job_id = $2",
      [this.scope, jobId],
    );
    const gone = current[0]?.holder;
    if (gone === undefined || !abandoned(gone)) return false;
    // Taken only from that holder: two processes taking over at once, one of them wins.
    const taken = await this.query(
      `UPDATE crm_download_leases SET holder = $3, expires = $4
       WHERE scope = $1 AND job_id = $2 AND holder = $5 RETURNING holder`,
      [this.scope, jobId, holder, at + ttlMs, gone],
    );
    return taken.length === 1;
  }

  async releaseDownloadLease(jobId: string, holder: string): Promise<void> {
    await this.query(
      "DELETE FROM crm_download_leases WHERE scope = $1 AND job_id = $2 AND holder = $3",
      [this.scope, jobId, holder],
    );
  }

  /** Nothing of its own to close: the connection is its opener's to close. */
  async close(): Promise<void> {}

  /** Read, change, write one entry in a transaction holding its row lock. */
  private async change(jobId: string, edit: EntryEdit): Promise<LedgerEntry | undefined> {
    return this.transaction(async (client) => {
      const rows = await client.query<{ entry: LedgerEntry }>(
        "SELECT entry FROM crm_export_jobs WHERE scope = $1 AND job_id = $2 FOR UPDATE",
        [this.scope, jobId],
      );
      const entry = rows.rows[0]?.entry;
      if (entry === undefined) return undefined;
      const before = JSON.stringify(entry);
      edit(entry);
      // A poll that saw no news writes nothing.
      if (JSON.stringify(entry) !== before) {
        await client.query(
          "UPDATE crm_export_jobs SET status = $3, entry = $4 WHERE scope = $1 AND job_id = $2",
          [this.scope, jobId, entry.status, entry],
        );
      }
      return entry;
    });
  }

  private nowIso(): string {
    return new Date(this.now()).toISOString();
  }

  private query<R extends object>(text: string, values: unknown[]): Promise<R[]> {
    return this.db.query<R>(text, values);
  }

  private transaction<T>(
    work: (client: PoolClient) => Promise<T>,
    ifCommitLost?: (result: T) => LaterWrite | undefined,
  ): Promise<T> {
    return this.db.transaction(work, ifCommitLost);
  }
}
