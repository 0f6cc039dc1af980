import { DOWNLOAD_URL_VALIDITY_HOURS } from "../api/limits.js";
import type { CreateExportJobRequest, ExportJob, ExportStatus } from "../api/schemas.js";
import { isRegularFile } from "../regular-file.js";
import type { BudgetStatus } from "./budget.js";
import type { ClaimOwner, ClaimResult } from "./pending-creation.js";

/**
 * What the tools need of the export-job ledger and budget, whatever keeps them: files in
 * CRM_DATA_DIR (ledger.ts, the default) or a PostgreSQL database shared by several server
 * processes (postgres-ledger.ts). Both pass one behaviour suite (test/ledger/store-suite.ts).
 */
export interface LedgerStore {
  /** Where the ledger lives, for messages ("a file path" or "PostgreSQL database ..."). */
  readonly location: string;
  /** Most recently created first. */
  list(limit?: number): Promise<LedgerEntry[]>;
  count(): Promise<number>;
  /** A listing in one read: the newest `limit` entries, how many there are, and the budget. */
  recent(limit: number): Promise<{ entries: LedgerEntry[]; total: number; budget: BudgetStatus }>;
  get(jobId: string): Promise<LedgerEntry | undefined>;
  /** Problems met while reading not yet shown (each returned once). */
  takeWarnings(): string[];
  /**
   * The newest completed job for the same request that still answers it (see pickReusable);
   * `undefined` when a new job is needed. Jobs of every user of the store are candidates.
   */
  findReusable(requestKey: string, options?: ReuseOptions): Promise<LedgerEntry | undefined>;
  budgetStatus(): Promise<BudgetStatus>;
  /**
   * Checks the budget and, when a creation is allowed, records it, in one atomic step: parallel
   * calls (in this process or any other sharing the store) cannot all pass the check before
   * any of them records.
   */
  reserveCreate(): Promise<CreateReservation>;
  /**
   * Gives a reservation's slot back: the service refused that creation with a definitive answer,
   * so it did not count it (see budget.ts). Every process sharing the store sees the slot free
   * again. Call it once per reservation; one that has left the window meanwhile changes nothing.
   */
  refundCreate(reservation: GrantedReservation): Promise<void>;
  /**
   * Claims the creation of the job for `requestKey` (pending-creation.ts) in one atomic step for
   * every process sharing the store: granted when nobody holds it, when `owner` already does,
   * or when the holder's claim was abandoned; otherwise the holder is returned.
   */
  claimCreate(requestKey: string, owner: ClaimOwner): Promise<ClaimResult>;
  /** Stores the owner's new `renewal` while the claim is still its own. */
  renewCreateClaim(requestKey: string, owner: ClaimOwner): Promise<void>;
  /** Ends the owner's claim (after the job was recorded, or the create failed). */
  releaseCreateClaim(requestKey: string, owner: ClaimOwner): Promise<void>;
  /** The service no longer knows this job: it is kept for the record but never reused. */
  markLost(jobId: string): Promise<void>;
  recordRateLimit(retryAfterMs: number | undefined): Promise<void>;
  recordCreated(
    request: CreateExportJobRequest,
    requestKey: string,
    job: ExportJob,
    createdBy?: string,
  ): Promise<LedgerEntry>;
  /** Stores the latest job object; returns the entry, or undefined for a job not in the ledger. */
  updateJob(job: ExportJob): Promise<LedgerEntry | undefined>;
  recordDownload(jobId: string, path: string, bytes: number): Promise<void>;
  /**
   * Records that the retention sweep removed these files: the entries keep their history (and
   * the path, for the record), marked so nobody looks for the file again. Returns how many.
   */
  markFilesRemoved(
    removed: ReadonlyArray<{ path: string; reason: "age" | "size" }>,
  ): Promise<number>;
  /** Downloaded files that still exist, newest first (listed as MCP resources). */
  downloadedFiles(): Promise<LedgerEntry[]>;
  /**
   * Takes (or renews, for the same holder) the right to download a job's file for `ttlMs`, so
   * two processes sharing the data folder do not download the same file. False while another
   * holder's lease runs; a lease whose holder died expires on its own, or at once when
   * `abandoned` says its holder is gone (a process of this machine that no longer runs).
   */
  acquireDownloadLease(
    jobId: string,
    holder: string,
    ttlMs: number,
    abandoned?: (holder: string) => boolean,
  ): Promise<boolean>;
  releaseDownloadLease(jobId: string, holder: string): Promise<void>;
  close(): Promise<void>;
}

/** One export job created through the ledger, as remembered across restarts. */
export interface LedgerEntry {
  job_id: string;
  /** The create request exactly as sent. */
  request: CreateExportJobRequest;
  /** Normalized request (type, id, dates in the app's zone) used to find reusable jobs. */
  request_key: string;
  /** When it was created (the ledger's clock, ISO 8601 UTC). */
  requested_at: string;
  /** Who created it (mcp/caller.ts): the token's subject or name over HTTP, local:<user> on stdio. */
  created_by?: string | undefined;
  status: ExportStatus;
  history: Array<{ status: ExportStatus; at: string }>;
  /** The last job object seen, with the download URL's signature removed. */
  job: ExportJob;
  file_path?: string | undefined;
  file_bytes?: number | undefined;
  downloaded_at?: string | undefined;
  /** Set when the service no longer knows the job (e.g. a restarted sandbox); never reused. */
  lost_at?: string | undefined;
  /** Set when the retention sweep removed the downloaded file (CRM_RETENTION_DAYS/MB). */
  file_removed_at?: string | undefined;
  /** Why: older than the age limit, or over the size limit. */
  file_removed_reason?: "age" | "size" | undefined;
}

export interface ReuseOptions {
  /**
   * Epoch ms at which the requested range ends (the end of its `to` day); `undefined` for an
   * open range. A file is reused past its URL's validity only if the range had ended before the
   * job was created: otherwise rounds still aggregating would be missing from it.
   */
  rangeEndsAt?: number | undefined;
}

/** What reserveCreate answers: a slot taken, or the budget's refusal (nothing was recorded). */
export type CreateReservation = GrantedReservation | RefusedReservation;

export interface GrantedReservation {
  reserved: true;
  status: BudgetStatus;
  /** The creation's stamp in the budget (epoch ms): the slot refundCreate gives back. */
  at: number;
}

export interface RefusedReservation {
  reserved: false;
  status: BudgetStatus;
}

/** How long a download URL is valid (spec 2.3); without an expiry, reuse stays inside that. */
const URL_VALIDITY_MS = DOWNLOAD_URL_VALIDITY_HOURS * 3600 * 1000;

/**
 * The reuse rule both stores apply: among `entries` (newest first) for one request, the first
 * completed job whose file is on disk or (not lost) whose download URL is still valid, and whose
 * data cannot have grown since (see ReuseOptions). A completed job whose file is on disk is
 * final: the service forgetting it (a restart) does not make the file any less the answer.
 */
export async function pickReusable(
  entries: readonly LedgerEntry[],
  now: number,
  options: ReuseOptions = {},
): Promise<LedgerEntry | undefined> {
  for (const entry of entries) {
    if (entry.status !== "completed") continue;
    const createdAt = Date.parse(entry.job.created_at ?? entry.requested_at);
    const parsedExpiry = Date.parse(entry.job.download_url_expires_at ?? "");
    const expires = Number.isFinite(parsedExpiry)
      ? parsedExpiry
      : Number.isFinite(createdAt)
        ? createdAt + URL_VALIDITY_MS
        : Number.NaN;
    // A minute of margin so the download does not start on a URL about to expire.
    const urlValid = Number.isFinite(expires) && expires - 60_000 > now;
    const closed =
      options.rangeEndsAt !== undefined &&
      Number.isFinite(createdAt) &&
      options.rangeEndsAt <= createdAt;
    const hasFile = entry.file_path !== undefined && (await isRegularFile(entry.file_path));
    if (entry.lost_at !== undefined && !hasFile) continue;
    if (closed && hasFile) return entry;
    if (urlValid && (hasFile || entry.job.download_url_expires_at !== undefined)) return entry;
  }
  return undefined;
}

/** Of `entries` (newest first), those whose file is still on disk. */
export async function withFilePresent(entries: readonly LedgerEntry[]): Promise<LedgerEntry[]> {
  const present: LedgerEntry[] = [];
  for (const entry of entries) {
    if (entry.file_path !== undefined && (await isRegularFile(entry.file_path)))
      present.push(entry);
  }
  return present;
}
