import { setTimeout as sleep } from "node:timers/promises";
import { ToolCancelledError } from "../cancelled.js";
import {
  CLAIM_RENEW_MS,
  type ClaimOwner,
  holdClaim,
  newClaimOwner,
} from "../ledger/pending-creation.js";
import { log } from "../log.js";
import type { ExportCall, ExportRuntime } from "./export-call.js";

/** How often a waiting call asks whether the other process's creation has ended. */
const CLAIM_POLL_MS = 200;
/** How often a waiting call tells the client it still waits. */
const PROGRESS_EVERY_MS = 2_000;

/** This process's claim on creating one request's job. */
export interface CreateClaim {
  /** True when another process held the claim first: its job may be in the ledger now. */
  waited: boolean;
  release(): Promise<void>;
}

/**
 * Claims the creation of the job for `key` in the ledger store, waiting while another server
 * process holds the claim (it is creating the same job). The wait ends when that process
 * releases the claim (its job is then recorded) or when its claim is judged abandoned (its
 * process died, or it stopped renewing: see pending-creation.ts), or when the call is cancelled.
 * The claim is renewed until released.
 */
export async function claimCreation(
  runtime: ExportRuntime,
  key: string,
  call: ExportCall,
): Promise<CreateClaim> {
  const owner = newClaimOwner();
  const started = performance.now();
  let waited = false;
  let reportedAt = Number.NEGATIVE_INFINITY;
  for (;;) {
    if (call.signal.aborted) {
      throw new ToolCancelledError("Cancelled while waiting for an identical export's creation.");
    }
    const result = await runtime.ledger.claimCreate(key, owner);
    if (result.claimed) return held(runtime, key, owner, waited);
    waited = true;
    const now = performance.now();
    if (now - reportedAt >= PROGRESS_EVERY_MS) {
      reportedAt = now;
      const seconds = Math.round((now - started) / 1000);
      await call.progress(
        seconds,
        `An identical export job is being created by another server process (PID ${result.holder.pid} on ${result.holder.host}); waiting ${seconds}s so far to join it instead of creating a second job.`,
      );
    }
    await sleep(CLAIM_POLL_MS, undefined, { signal: call.signal }).catch(() => undefined);
  }
}

function held(
  runtime: ExportRuntime,
  key: string,
  owner: ClaimOwner,
  waited: boolean,
): CreateClaim {
  const unhold = holdClaim(owner);
  const renewer = setInterval(() => {
    owner.renewal += 1;
    runtime.ledger
      .renewCreateClaim(key, { ...owner })
      .catch((error: unknown) => log.warn("export claim renewal failed", { error: String(error) }));
  }, CLAIM_RENEW_MS);
  renewer.unref();
  let released = false;
  return {
    waited,
    async release() {
      if (released) return;
      released = true;
      clearInterval(renewer);
      unhold();
      await runtime.ledger
        .releaseCreateClaim(key, owner)
        .catch((error: unknown) =>
          log.warn("export claim release failed", { error: String(error) }),
        );
    },
  };
}
