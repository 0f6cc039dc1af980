import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { processAlive } from "../file-io/process-alive.js";

/**
 * Who holds a job's download lease (LedgerStore.acquireDownloadLease): `host:pid:nonce`, this
 * process's own, so that another process on the same machine can tell a holder that died.
 */
export const LEASE_HOLDER = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;

/**
 * Whether a lease's holder is a process of this machine that no longer runs (killed or crashed
 * mid-download): its lease is free at once rather than when it expires, so the file downloads
 * as soon as a restarted server asks for it. A holder on another machine is never judged.
 */
export function leaseHolderGone(holder: string): boolean {
  const parts = holder.split(":");
  if (parts.length < 3) return false;
  const pid = Number(parts.at(-2));
  const host = parts.slice(0, -2).join(":");
  return host === hostname() && pid !== process.pid && !processAlive(pid);
}
