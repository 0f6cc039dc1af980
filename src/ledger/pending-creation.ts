import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { processAlive } from "../file-io/process-alive.js";

/**
 * A pending creation: the record a process leaves in the ledger store, under the request key,
 * while it creates the job for that request, so an identical call in another process waits and
 * joins the job instead of creating a second one. Whether a claim was abandoned is judged
 * without comparing clocks across processes (clocks jump; the store may be on another host):
 * - on the same host, an owner whose PID no longer runs died with its claim;
 * - otherwise the owner renews the claim (its `renewal` counter changes) while it creates, and
 *   an observer takes it over once it has seen the same renewal for CLAIM_LEASE_MS of its own
 *   monotonic time, or the same claim for CLAIM_MAX_MS however often renewed (a create call is
 *   bounded well below that, so a claim that old is stuck).
 */
export interface ClaimOwner {
  pid: number;
  host: string;
  token: string;
  renewal: number;
}

export type ClaimResult = { claimed: true } | { claimed: false; holder: ClaimOwner };

export const CLAIM_RENEW_MS = 2_000;
export const CLAIM_LEASE_MS = 10_000;
export const CLAIM_MAX_MS = 120_000;

/** Tokens of the claims this process holds now: a claim with our PID not in here is a leftover. */
const held = new Set<string>();

export function newClaimOwner(): ClaimOwner {
  return { pid: process.pid, host: hostname(), token: randomBytes(12).toString("hex"), renewal: 0 };
}

/** Marks a claim as held by this process (between a granted claim and its release). */
export function holdClaim(owner: ClaimOwner): () => void {
  held.add(owner.token);
  return () => held.delete(owner.token);
}

/** The observer's memory of other processes' claims; one per store instance. */
export class ClaimJudge {
  private readonly seen = new Map<
    string,
    { token: string; renewal: number; since: number; first: number }
  >();

  constructor(private readonly monotonic: () => number = () => performance.now()) {}

  /** True when `owner`'s claim on `key` may be taken over. */
  abandoned(key: string, owner: ClaimOwner): boolean {
    if (owner.host === hostname()) {
      if (owner.pid === process.pid) {
        if (!held.has(owner.token)) return true;
      } else if (!processAlive(owner.pid)) {
        return true;
      }
    }
    const now = this.monotonic();
    const last = this.seen.get(key);
    if (last === undefined || last.token !== owner.token) {
      this.seen.set(key, { token: owner.token, renewal: owner.renewal, since: now, first: now });
      return false;
    }
    if (last.renewal !== owner.renewal) {
      last.renewal = owner.renewal;
      last.since = now;
    }
    return now - last.since > CLAIM_LEASE_MS || now - last.first > CLAIM_MAX_MS;
  }

  /** Forgets what was seen of `key` (its claim was released or taken). */
  forget(key: string): void {
    this.seen.delete(key);
  }
}

/** A stored owner, checked field by field (it comes from a file or a database). */
export function parseClaimOwner(value: unknown): ClaimOwner | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const v = value as Partial<Record<keyof ClaimOwner, unknown>>;
  if (
    typeof v.pid !== "number" ||
    typeof v.host !== "string" ||
    typeof v.token !== "string" ||
    typeof v.renewal !== "number"
  ) {
    return undefined;
  }
  return { pid: v.pid, host: v.host, token: v.token, renewal: v.renewal };
}
