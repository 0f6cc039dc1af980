import { readFile, rename, stat } from "node:fs/promises";
import { join } from "node:path";
import type { CreateExportJobRequest, ExportJob, ExportStatus } from "../api/schemas.js";
import { log } from "../log.js";
import { redact } from "../redact.js";
import { writeFileAtomic } from "./atomic-file.js";
import { type BudgetStatus, budgetStatus, type ExportBudget } from "./budget.js";

/** One export job this server created, as remembered across restarts. */
export interface LedgerEntry {
  job_id: string;
  /** The create request exactly as sent. */
  request: CreateExportJobRequest;
  /** Normalized request (type, id, dates in the app's zone) used to find reusable jobs. */
  request_key: string;
  /** When this server created it (local clock, ISO 8601 UTC). */
  requested_at: string;
  status: ExportStatus;
  history: Array<{ status: ExportStatus; at: string }>;
  /** The last job object seen, with the download URL's signature removed. */
  job: ExportJob;
  file_path?: string | undefined;
  file_bytes?: number | undefined;
  downloaded_at?: string | undefined;
}

interface LedgerFile {
  version: 1;
  jobs: LedgerEntry[];
  /** Epoch ms of create calls that may have reached the service (for the local budget). */
  create_calls: number[];
  /** Epoch ms until which the service told us (429 Retry-After) not to create. */
  rate_limited_until?: number | undefined;
}

const FILE_NAME = "export-jobs.json";
const MAX_JOBS = 500;

/**
 * The persistent record of export jobs, in CRM_DATA_DIR. Every operation re-reads the small file,
 * so two server processes sharing a data folder see each other's jobs and budget; writes are
 * atomic (see writeFileAtomic) and serialized within the process.
 */
export class JobLedger {
  readonly path: string;
  private readonly budget: ExportBudget;
  private readonly now: () => number;
  private queue: Promise<unknown> = Promise.resolve();
  /** Problems met while reading (a corrupt file moved aside); shown once to the model. */
  readonly warnings: string[] = [];

  constructor(dataDir: string, budget: ExportBudget, now: () => number = Date.now) {
    this.path = join(dataDir, FILE_NAME);
    this.budget = budget;
    this.now = now;
  }

  /** Most recently created first. */
  async list(limit = 20): Promise<LedgerEntry[]> {
    const file = await this.read();
    return [...file.jobs].reverse().slice(0, limit);
  }

  async count(): Promise<number> {
    return (await this.read()).jobs.length;
  }

  async get(jobId: string): Promise<LedgerEntry | undefined> {
    return (await this.read()).jobs.find((j) => j.job_id === jobId);
  }

  /**
   * The newest completed job for the same request whose file is still on disk or whose download
   * URL is still valid; `undefined` when a new job is needed.
   */
  async findReusable(requestKey: string): Promise<LedgerEntry | undefined> {
    const now = this.now();
    const candidates = (await this.read()).jobs
      .filter((j) => j.request_key === requestKey && j.status === "completed")
      .reverse();
    for (const entry of candidates) {
      if (entry.file_path !== undefined && (await fileExists(entry.file_path))) return entry;
      const expires = Date.parse(entry.job.download_url_expires_at ?? "");
      // A minute of margin so the download does not start on a URL about to expire.
      if (Number.isFinite(expires) && expires - 60_000 > now) return entry;
    }
    return undefined;
  }

  async budgetStatus(): Promise<BudgetStatus> {
    const file = await this.read();
    return budgetStatus(file.create_calls, file.rate_limited_until, this.budget, this.now());
  }

  /** Call just before sending a create request: it counts whether or not the request succeeds. */
  async recordCreateCall(): Promise<void> {
    const at = this.now();
    const windowMs = this.budget.windowSeconds * 1000;
    await this.mutate((file) => {
      file.create_calls = [...file.create_calls.filter((t) => t > at - windowMs), at];
    });
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
  ): Promise<LedgerEntry> {
    const at = new Date(this.now()).toISOString();
    const entry: LedgerEntry = {
      job_id: job._id,
      request,
      request_key: requestKey,
      requested_at: at,
      status: job.status,
      history: [{ status: job.status, at }],
      job: safeJob(job),
    };
    await this.mutate((file) => {
      file.jobs = [...file.jobs.filter((j) => j.job_id !== job._id), entry].slice(-MAX_JOBS);
    });
    return entry;
  }

  /** Stores the latest job object; returns the entry, or undefined for a job we did not create. */
  async updateJob(job: ExportJob): Promise<LedgerEntry | undefined> {
    const at = new Date(this.now()).toISOString();
    let updated: LedgerEntry | undefined;
    await this.mutate((file) => {
      const entry = file.jobs.find((j) => j.job_id === job._id);
      if (entry === undefined) return;
      if (entry.status !== job.status) entry.history.push({ status: job.status, at });
      entry.status = job.status;
      entry.job = safeJob(job);
      updated = entry;
    });
    return updated;
  }

  async recordDownload(jobId: string, path: string, bytes: number): Promise<void> {
    const at = new Date(this.now()).toISOString();
    await this.mutate((file) => {
      const entry = file.jobs.find((j) => j.job_id === jobId);
      if (entry === undefined) return;
      entry.file_path = path;
      entry.file_bytes = bytes;
      entry.downloaded_at = at;
    });
  }

  /** Downloaded files that still exist, newest first (listed as MCP resources). */
  async downloadedFiles(): Promise<LedgerEntry[]> {
    const entries = (await this.read()).jobs.filter((j) => j.file_path !== undefined).reverse();
    const present: LedgerEntry[] = [];
    for (const entry of entries) {
      if (entry.file_path !== undefined && (await fileExists(entry.file_path))) present.push(entry);
    }
    return present;
  }

  private mutate(change: (file: LedgerFile) => void): Promise<void> {
    const run = this.queue.then(async () => {
      const file = await this.read();
      change(file);
      await writeFileAtomic(this.path, `${JSON.stringify(file, null, 1)}\n`);
    });
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
    if (parsed !== undefined) return parsed;
    const backup = `${this.path}.corrupt-${this.now()}`;
    try {
      await rename(this.path, backup);
    } catch {
      // Another process may have moved it already; starting fresh is still right.
    }
    const warning = `The export-job ledger at ${this.path} could not be read; it was kept as ${backup} and a new one was started.`;
    this.warnings.push(warning);
    log.warn(warning);
    return emptyFile();
  }
}

function emptyFile(): LedgerFile {
  return { version: 1, jobs: [], create_calls: [] };
}

function parseLedger(text: string): LedgerFile | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== "object" || value === null) return undefined;
    const file = value as Partial<LedgerFile>;
    if (file.version !== 1 || !Array.isArray(file.jobs) || !Array.isArray(file.create_calls)) {
      return undefined;
    }
    return file as LedgerFile;
  } catch {
    return undefined;
  }
}

/** The job without the download URL's pre-signed query, which is a secret. */
export function safeJob(job: ExportJob): ExportJob {
  if (job.download_url === undefined) return job;
  return { ...job, download_url: redact(job.download_url) };
}

async function fileExists(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
