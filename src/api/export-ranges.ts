import { DateTime } from "luxon";
import {
  EXPORT_AB_ROUNDS_PER_TASK,
  EXPORT_MAX_ROUNDS,
  EXPORT_MAX_SENDS,
  sendsText,
} from "./limits.js";
import type { MetricsCampaign } from "./schemas.js";

/** Inclusive dates (YYYY-MM-DD in the app's zone), as start_export takes them. */
export interface ExportRange {
  from: string;
  to: string;
}

/**
 * When one export of the campaign's rounds would exceed the service's limit (spec 4.2), date
 * ranges (in the app's zone) that each stay under it, oldest first, and what the whole is over.
 * Sends of all rounds are counted (the service counts aggregated ones only), and an A/B
 * campaign's task counts as EXPORT_AB_ROUNDS_PER_TASK rounds (its send groups and its control
 * group count separately): both err on the safe side.
 */
export function exportRangesUnderLimit(
  campaign: MetricsCampaign,
  zone: string,
): { ranges: ExportRange[]; over: string } | undefined {
  const roundsPerTask = campaign.is_ab_test ? EXPORT_AB_ROUNDS_PER_TASK : 1;
  const sends = campaign.tasks.reduce((a, t) => a + t.sent_count, 0);
  const rounds = campaign.tasks.length * roundsPerTask;
  if (sends <= EXPORT_MAX_SENDS && rounds <= EXPORT_MAX_ROUNDS) return undefined;
  const byDate = new Map<string, { sends: number; rounds: number }>();
  for (const t of campaign.tasks) {
    const date = DateTime.fromISO(t.scheduled_at, { zone }).toISODate() ?? "";
    const day = byDate.get(date) ?? { sends: 0, rounds: 0 };
    day.sends += t.sent_count;
    day.rounds += roundsPerTask;
    byDate.set(date, day);
  }
  const ranges: ExportRange[] = [];
  let current: { from: string; to: string; sends: number; rounds: number } | undefined;
  for (const [date, day] of [...byDate.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    if (
      current !== undefined &&
      (current.sends + day.sends > EXPORT_MAX_SENDS ||
        current.rounds + day.rounds > EXPORT_MAX_ROUNDS)
    ) {
      ranges.push({ from: current.from, to: current.to });
      current = undefined;
    }
    current ??= { from: date, to: date, sends: 0, rounds: 0 };
    current.to = date;
    current.sends += day.sends;
    current.rounds += day.rounds;
  }
  if (current !== undefined) ranges.push({ from: current.from, to: current.to });
  const over =
    sends > EXPORT_MAX_SENDS
      ? `${sendsText(sends)} sends > ${sendsText(EXPORT_MAX_SENDS)}`
      : `${rounds} rounds${campaign.is_ab_test ? " (A/B send and control groups counted separately)" : ""} > ${EXPORT_MAX_ROUNDS}`;
  return { ranges, over };
}
