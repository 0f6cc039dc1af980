import { truncate } from "../../format.js";
import type { KnownSlotKeys } from "../../mcp/tool.js";

/** Keys named per list: enough to pick from, few enough for a short error. */
const MAX_LISTED = 20;
const MAX_ECHO = 60;

/** Each key as a JSON string (quotes and control characters escaped), capped with how many more. */
function listed(keys: readonly string[]): string {
  const shown = keys.slice(0, MAX_LISTED).map((k) => JSON.stringify(truncate(k, MAX_ECHO)));
  const more = keys.length - shown.length;
  return `${shown.join(", ")}${more > 0 ? ` and ${more} more` : ""}`;
}

/**
 * Why a slot_key the server knows is not a slot: the key given (escaped and cut) and the keys
 * there are, active first. Only where the server knows them (sandbox mode).
 */
export function unknownSlotKey(slotKey: string, known: KnownSlotKeys): string {
  const active =
    known.active.length > 0 ? `Active slot keys: ${listed(known.active)}.` : "No slot is active.";
  const inactive =
    known.inactive.length > 0
      ? ` Not active (recommend answers 404 for them): ${listed(known.inactive)}.`
      : "";
  return `No recommendation slot has the key ${JSON.stringify(truncate(slotKey, MAX_ECHO))}. ${active}${inactive}`;
}
