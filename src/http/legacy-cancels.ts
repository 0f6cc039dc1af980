import type { ServerResponse } from "node:http";
import { log } from "../log.js";

/**
 * Cancellation of 2025-era calls. A modern (2026-07-28) client cancels by closing the call's
 * stream, which aborts the call on the server. A 2025-era client instead POSTs
 * `notifications/cancelled` separately, and stateless serving hands it to a fresh server
 * instance that never saw the call. So calls in flight are tracked here by the caller's token
 * name and JSON-RPC id, and a cancellation cuts that call's response, which aborts it as a
 * disconnect does. Only when exactly one call matches: two clients of one token may use the same
 * id. Behind a load balancer the cancellation must reach the same process (sticky routing).
 */
export class LegacyCancels {
  private readonly calls = new Map<string, Set<ServerResponse>>();

  track(who: string | undefined, id: string | number | undefined, res: ServerResponse): () => void {
    if (id === undefined) return () => undefined;
    const key = `${who ?? ""}\n${String(id)}`;
    let set = this.calls.get(key);
    if (set === undefined) {
      set = new Set();
      this.calls.set(key, set);
    }
    set.add(res);
    return () => {
      set.delete(res);
      if (set.size === 0 && this.calls.get(key) === set) this.calls.delete(key);
    };
  }

  cancel(who: string | undefined, id: string | number): void {
    const set = this.calls.get(`${who ?? ""}\n${String(id)}`);
    if (set === undefined) return;
    if (set.size > 1) {
      log.info("cancellation ambiguous: several calls in flight with that id; none cut", { id });
      return;
    }
    for (const res of set) res.destroy();
  }
}

export function requestIdOf(message: unknown): string | number | undefined {
  if (typeof message !== "object" || message === null || !("method" in message)) return undefined;
  const id = (message as { id?: unknown }).id;
  return typeof id === "string" || typeof id === "number" ? id : undefined;
}

export function cancelledRequestId(message: unknown): string | number | undefined {
  const m = message as { method?: unknown; params?: { requestId?: unknown } } | null;
  if (m?.method !== "notifications/cancelled") return undefined;
  const id = m.params?.requestId;
  return typeof id === "string" || typeof id === "number" ? id : undefined;
}
