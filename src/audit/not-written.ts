import { log } from "../log.js";
import { scrubText } from "./audit-arguments.js";

/**
 * Logs a record the trail could not write. Only the error's kind and its message with anything
 * credential-like masked: a database's message may quote the values it refused.
 */
export function notWritten(trail: string, error: unknown): void {
  log.warn("audit trail not written", {
    trail,
    error: error instanceof Error ? error.name : typeof error,
    message: scrubText(error instanceof Error ? error.message : String(error)).slice(0, 300),
  });
}
