import { metricsWindow, parseMoment } from "./dates.js";
import { errorReply, type JsonReply } from "./http-util.js";
import { METRICS_WINDOW_DAYS, SCHEDULE_TYPES, type ScheduleType } from "./spec.js";
import { KST } from "./world/time.js";
import type { World } from "./world/types.js";

/** Spec 8: the longest window between task_from and task_to (after reading both as instants). */
const MAX_METRICS_WINDOW_MS = METRICS_WINDOW_DAYS * 24 * 60 * 60 * 1000;

/**
 * Spec 4.4. Its error statuses are not shown; they follow the export endpoints' style: 400
 * without a code for a missing or malformed parameter, 400 `InvalidParameter` for a well-formed
 * window the service refuses (over METRICS_WINDOW_DAYS, or task_from not before task_to).
 */
export function campaignMetrics(world: World, query: URLSearchParams): JsonReply {
  const rawFrom = query.get("task_from");
  const rawTo = query.get("task_to");
  if (rawFrom === null || rawFrom === "" || rawTo === null || rawTo === "") {
    return errorReply(400, "task_from and task_to are required (ISO 8601 or YYYY-MM-DD)");
  }
  // Spec 4.4 rules 3 and 4 name KST, whatever the application's zone.
  const from = parseMoment(rawFrom, KST);
  const to = parseMoment(rawTo, KST);
  if (from === undefined) return malformed("task_from", rawFrom);
  if (to === undefined) return malformed("task_to", rawTo);
  const rawType = query.get("campaign_schedule_type");
  let scheduleType: ScheduleType | undefined;
  if (rawType !== null && rawType !== "") {
    if (!(SCHEDULE_TYPES as readonly string[]).includes(rawType)) {
      return errorReply(400, `campaign_schedule_type must be one of ${SCHEDULE_TYPES.join(", ")}`);
    }
    scheduleType = rawType as ScheduleType;
  }
  const { fromMs, toMs } = metricsWindow(from, to);
  if (fromMs >= toMs) {
    return errorReply(400, "task_from must be before task_to", "InvalidParameter");
  }
  if (toMs - fromMs > MAX_METRICS_WINDOW_MS) {
    return errorReply(
      400,
      `The window between task_from and task_to is over ${METRICS_WINDOW_DAYS} days; split it into several queries.`,
      "InvalidParameter",
    );
  }
  return { status: 200, body: world.campaignMetrics(fromMs, toMs, scheduleType) };
}

function malformed(name: string, value: string): JsonReply {
  // An unencoded `+` of an offset like +09:00 reaches the server as a space.
  const hint = value.includes(" ")
    ? " (a '+' in a query string reads as a space: URL-encode it as %2B, e.g. +09:00 as %2B09:00)"
    : "";
  return errorReply(400, `${name} is not ISO 8601 or YYYY-MM-DD: ${value}${hint}`);
}
