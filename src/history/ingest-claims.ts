import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { LedgerStore } from "../ledger/store.js";
import { log } from "../log.js";
import { sleep } from "../sleep.js";

/**
 * The right to add one job's file to the history, held by one process at a time. Without it two
 * processes sharing a data folder can both read the same file into staging: the one that
 * downloaded it (its keeper adds it after the download's lease ends) and one whose first call
 * catches up on the ledger's downloads at that moment. The catalogue would keep the file once
 * either way (a commit re-reads it); the claim spares the second reading, which for a large
 * export is most of a core for seconds and its share of memory.
 */
export interface IngestClaims {
  /** Takes, or renews for its holder, the claim on `jobId`; false while another holds it. */
  take(jobId: string): Promise<boolean>;
  release(jobId: string): Promise<void>;
}

/** A claim outlives a holder that died on another machine by at most this; work renews it. */
const CLAIM_TTL_MS = 60_000;
/** How often a process waiting on another's claim looks again. */
const CLAIM_WAIT_MS = 500;

/**
 * Claims kept as leases of the ledger (the download's lease kind, under `history:<job>`), so
 * every process sharing the ledger's file or database sees them. Each instance is a holder of
 * its own (`host:pid:nonce`, as download-lease.ts writes it: `abandoned` can judge it).
 */
export function ledgerIngestClaims(
  ledger: Pick<LedgerStore, "acquireDownloadLease" | "releaseDownloadLease">,
  abandoned: (holder: string) => boolean,
): IngestClaims {
  const holder = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
  const key = (jobId: string) => `history:${jobId}`;
  return {
    take: (jobId) => ledger.acquireDownloadLease(key(jobId), holder, CLAIM_TTL_MS, abandoned),
    release: (jobId) => ledger.releaseDownloadLease(key(jobId), holder),
  };
}

/**
 * Runs `work` (which adds `jobId`, and answers at once when the catalogue holds it) once this
 * process holds the job's claim, or once the catalogue holds the job (another process added it
 * meanwhile). A claim that cannot be read or written (the ledger is away) is no reason to fail:
 * the work then runs unclaimed, as it would without claims.
 */
export async function withIngestClaim<T>(
  claims: IngestClaims,
  jobId: string,
  held: () => Promise<boolean>,
  work: () => Promise<T>,
  signal: AbortSignal = new AbortController().signal,
): Promise<T> {
  for (;;) {
    if (await held()) return work();
    let taken: boolean;
    try {
      taken = await claims.take(jobId);
    } catch (error) {
      log.warn("history: the claim to add an export could not be taken; adding it unclaimed", {
        job_id: jobId,
        error: messageOf(error),
      });
      return staged(jobId, work);
    }
    if (taken) break;
    await sleep(CLAIM_WAIT_MS, signal);
  }
  const renew = setInterval(() => {
    claims.take(jobId).catch((error: unknown) => {
      log.warn("history: a claim's renewal failed", { job_id: jobId, error: messageOf(error) });
    });
  }, CLAIM_TTL_MS / 3);
  renew.unref();
  try {
    // Added by the holder this process waited for, between its last look and the claim.
    if (await held()) return await work();
    return await staged(jobId, work);
  } finally {
    clearInterval(renew);
    await claims.release(jobId).catch((error: unknown) => {
      log.warn("history: a claim could not be released (it expires)", {
        job_id: jobId,
        error: messageOf(error),
      });
    });
  }
}

/**
 * Runs `work` without a claim (a history opened without claims, e.g. in a test or a script):
 * the catalogue's commit still keeps the file once, though two processes may both read it.
 */
export async function unclaimed<T>(
  jobId: string,
  held: () => Promise<boolean>,
  work: () => Promise<T>,
): Promise<T> {
  return (await held()) ? work() : staged(jobId, work);
}

/** The work of reading the file, logged: one line per reading, whichever process does it. */
function staged<T>(jobId: string, work: () => Promise<T>): Promise<T> {
  log.info("history: reading an export into the history", { job_id: jobId });
  return work();
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
