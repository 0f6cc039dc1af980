import { DateTime } from "luxon";
import { formatMetricsParam } from "../api/dates.js";
import { MAX_METRICS_WINDOW_DAYS } from "../api/limits.js";
import { roundReadiness } from "../api/round-readiness.js";
import type { CrmApi } from "../api/types.js";

/**
 * For a campaign export the service refused as ResourceNotReady (no round of the range has
 * finished aggregation, spec 4.2): the date, in the application's zone, of the campaign's last
 * round up to `toDate` that should have finished by now, read from campaign metrics over the
 * days before, so the error can name a range that holds one. `null`: no such round in those
 * days; `undefined`: the service could not be asked (the error then names no range).
 */
export async function lastReadyRoundDate(
  api: CrmApi,
  campaignId: string,
  toDate: string | undefined,
  zone: string,
  now: number,
  signal: AbortSignal,
): Promise<string | null | undefined> {
  const asked = toDate === undefined ? undefined : DateTime.fromISO(toDate, { zone });
  const nowDt = DateTime.fromMillis(now, { zone });
  const end =
    asked?.isValid === true && asked.plus({ days: 1 }) < nowDt ? asked.plus({ days: 1 }) : nowDt;
  const start = end.minus({ days: MAX_METRICS_WINDOW_DAYS });
  try {
    const { campaigns } = await api.campaignMetrics(
      { task_from: formatMetricsParam(start), task_to: formatMetricsParam(end) },
      { signal },
    );
    const campaign = campaigns.find((c) => c._id === campaignId);
    if (campaign === undefined) return null;
    let last: number | undefined;
    for (const task of campaign.tasks) {
      const at = Date.parse(task.scheduled_at);
      if (at >= end.toMillis() || roundReadiness(task, campaign).expected > now) continue;
      if (last === undefined || at > last) last = at;
    }
    return last === undefined ? null : DateTime.fromMillis(last, { zone }).toISODate();
  } catch {
    return undefined;
  }
}
