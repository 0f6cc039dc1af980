import type { LedgerFile } from "./ledger-file.js";
import type { ClaimJudge, ClaimOwner, ClaimResult } from "./pending-creation.js";

/**
 * Pending creations (pending-creation.ts) in the file ledger's JSON, `create_claims` by request
 * key. Each function changes the file in place; the ledger runs it under its cross-process lock.
 */
export function claimInFile(
  file: LedgerFile,
  requestKey: string,
  owner: ClaimOwner,
  judge: ClaimJudge,
): ClaimResult {
  const claims = file.create_claims ?? {};
  const holder = claims[requestKey];
  if (
    holder !== undefined &&
    holder.token !== owner.token &&
    !judge.abandoned(requestKey, holder)
  ) {
    return { claimed: false, holder };
  }
  claims[requestKey] = owner;
  file.create_claims = claims;
  judge.forget(requestKey);
  return { claimed: true };
}

export function renewInFile(file: LedgerFile, requestKey: string, owner: ClaimOwner): void {
  const holder = file.create_claims?.[requestKey];
  if (holder?.token === owner.token) holder.renewal = owner.renewal;
}

export function releaseInFile(file: LedgerFile, requestKey: string, owner: ClaimOwner): void {
  const claims = file.create_claims;
  if (claims?.[requestKey]?.token !== owner.token) return;
  delete claims[requestKey];
  if (Object.keys(claims).length === 0) file.create_claims = undefined;
}
