import { DateTime } from "luxon";
import {
  EXPORT_AB_ROUNDS_PER_TASK,
  EXPORT_MAX_ROUNDS,
  EXPORT_MAX_SENDS,
  MAX_METRICS_WINDOW_DAYS,
  sendsText,
} from "../api/limits.js";
import { roundReadiness } from "../api/round-readiness.js";
import type { MetricsCampaign } from "../api/schemas.js";
import type { RecentCampaigns } from "./recent-campaigns.js";

/** Inclusive dates (YYYY-MM-DD in the application's zone), as start_export takes them. */
export interface DateRange {
  from: string;
  to: string;
}

/**
 * What a campaign prompt asks the model to export, decided when the prompt is read, from the
 * rounds the service reports (recent-campaigns.ts), so that every call it names can run:
 * - `export`: one start_export per range (several when one export could not hold the period);
 * - `as_given`: the user's dates unchecked (the service was not reached, or the period reaches
 *   back past what it was asked for);
 * - `not_aggregated`: the period's rounds are all still aggregating, so no export holds them yet;
 * - `find_rounds`: no round known in the period: campaign_metrics over a longer window finds them.
 */
export type CampaignExportPlan =
  | { kind: "export"; ranges: DateRange[]; defaulted: boolean /** A sentence. */; note?: string }
  | { kind: "as_given"; from?: string; to?: string }
  | {
      kind: "not_aggregated";
      /** "from 2026-11-01 to 2026-11-07", or "in the last N days" (N: MAX_METRICS_WINDOW_DAYS). */
      where: string;
      rounds: number;
      earliestScheduledAt: number;
      latestSentAt: number;
      readyAt: number;
    }
  | { kind: "find_rounds"; why: string };

/** The period a prompt reads without dates: the campaign's last 30 days of exportable rounds. */
export const DEFAULT_DAYS = 30;

interface Day {
  date: string;
  sends: number;
  rounds: number;
}

export function planCampaignExport(input: {
  campaignId: string;
  recent: RecentCampaigns | undefined;
  now: number;
  zone: string;
  from: string | undefined;
  to: string | undefined;
}): CampaignExportPlan {
  const { recent, zone, from, to } = input;
  const given = from !== undefined || to !== undefined;
  const campaign = recent?.campaigns.find((c) => c._id === input.campaignId);
  const dayOf = (ms: number) => DateTime.fromMillis(ms, { zone }).toISODate() as string;

  if (given) {
    // Rounds before the lookup's window are unknown: the period cannot be checked.
    const firstKnown = recent === undefined ? undefined : dayOf(recent.since + 86_400_000);
    if (firstKnown === undefined || from === undefined || from < firstKnown) {
      return {
        kind: "as_given",
        ...(from === undefined ? {} : { from }),
        ...(to === undefined ? {} : { to }),
      };
    }
    const last = to ?? dayOf(input.now);
    const tasks = (campaign?.tasks ?? []).filter((t) => {
      const day = dayOf(Date.parse(t.scheduled_at));
      return day >= from && day <= last;
    });
    if (tasks.length === 0 || campaign === undefined) {
      return {
        kind: "find_rounds",
        why: `the service reports no round of this campaign from ${from} to ${last}`,
      };
    }
    // The service decides; only a period whose every round is certainly not aggregated is not asked.
    const past = tasks.filter((t) => roundReadiness(t, campaign).deadline <= input.now);
    if (past.length === 0) return notAggregated(campaign, tasks, `from ${from} to ${last}`);
    const ranges = splitUnderLimit(days(campaign, tasks, zone), from, last);
    return ranges.length === 1
      ? { kind: "export", ranges: [{ from, to: last }], defaulted: false }
      : {
          kind: "export",
          ranges,
          defaulted: false,
          note: `The period holds more than one export can (at most ${sendsText(EXPORT_MAX_SENDS)} sends and ${EXPORT_MAX_ROUNDS} rounds, A/B groups counted separately), so it is split.`,
        };
  }

  if (recent === undefined) {
    return { kind: "find_rounds", why: "the service could not be asked for its rounds just now" };
  }
  if (campaign === undefined || campaign.tasks.length === 0) {
    return {
      kind: "find_rounds",
      why: `the service reports no round of it in the last ${MAX_METRICS_WINDOW_DAYS} days (since ${dayOf(recent.since)})`,
    };
  }
  // The period ends at the latest round expected aggregated, else at the latest that may be.
  const latestWhere = (ready: (r: { deadline: number; expected: number }) => number) =>
    campaign.tasks
      .filter((t) => ready(roundReadiness(t, campaign)) <= input.now)
      .map((t) => Date.parse(t.scheduled_at))
      .sort((a, b) => b - a)[0];
  const latest = latestWhere((r) => r.expected) ?? latestWhere((r) => r.deadline);
  if (latest === undefined) {
    return notAggregated(campaign, campaign.tasks, `in the last ${MAX_METRICS_WINDOW_DAYS} days`);
  }
  const end = dayOf(latest);
  const start = DateTime.fromISO(end, { zone })
    .minus({ days: DEFAULT_DAYS - 1 })
    .toISODate() as string;
  const inPeriod = campaign.tasks.filter((t) => {
    const day = dayOf(Date.parse(t.scheduled_at));
    return day >= start && day <= end;
  });
  const newest = newestUnderLimit(days(campaign, inPeriod, zone));
  if (newest === undefined || newest <= start) {
    return { kind: "export", ranges: [{ from: start, to: end }], defaulted: true };
  }
  return {
    kind: "export",
    ranges: [{ from: newest, to: end }],
    defaulted: true,
    note: `The period starts later than ${start}, ${DEFAULT_DAYS} days before its end: one export holds at most ${sendsText(EXPORT_MAX_SENDS)} sends and ${EXPORT_MAX_ROUNDS} rounds (A/B groups counted separately), and those ${DEFAULT_DAYS} days hold more.`,
  };
}

function notAggregated(
  campaign: MetricsCampaign,
  tasks: MetricsCampaign["tasks"],
  where: string,
): CampaignExportPlan {
  const sent = tasks.map((t) => Date.parse(t.sent_at ?? t.scheduled_at));
  return {
    kind: "not_aggregated",
    where,
    rounds: tasks.length,
    earliestScheduledAt: Math.min(...tasks.map((t) => Date.parse(t.scheduled_at))),
    latestSentAt: Math.max(...sent),
    readyAt: Math.min(...tasks.map((t) => roundReadiness(t, campaign).expected)),
  };
}

/** Sends and rounds per day (in the zone), oldest first; every round counts, ready or not. */
function days(campaign: MetricsCampaign, tasks: MetricsCampaign["tasks"], zone: string): Day[] {
  const perTask = campaign.is_ab_test ? EXPORT_AB_ROUNDS_PER_TASK : 1;
  const byDate = new Map<string, Day>();
  for (const t of tasks) {
    const date = DateTime.fromISO(t.scheduled_at, { zone }).toISODate() as string;
    const day = byDate.get(date) ?? { date, sends: 0, rounds: 0 };
    day.sends += t.sent_count;
    day.rounds += perTask;
    byDate.set(date, day);
  }
  return [...byDate.values()].sort((a, b) => a.date.localeCompare(b.date));
}

const fits = (sends: number, rounds: number) =>
  sends <= EXPORT_MAX_SENDS && rounds <= EXPORT_MAX_ROUNDS;

/**
 * The first day of the longest run of the newest days that one export holds; undefined when all
 * of them fit. A single day over the limit is kept whole: dates are the finest cut there is.
 */
function newestUnderLimit(byDay: Day[]): string | undefined {
  let sends = 0;
  let rounds = 0;
  let first: string | undefined;
  for (const day of [...byDay].reverse()) {
    if (first !== undefined && !fits(sends + day.sends, rounds + day.rounds)) return first;
    sends += day.sends;
    rounds += day.rounds;
    first = day.date;
  }
  return undefined;
}

/**
 * Consecutive ranges covering `from` to `to` (days without rounds included), each under the
 * export limit, oldest first; one range when the whole period fits.
 */
function splitUnderLimit(byDay: Day[], from: string, to: string): DateRange[] {
  const ranges: DateRange[] = [];
  let start = from;
  let sends = 0;
  let rounds = 0;
  let previous: string | undefined;
  for (const day of byDay) {
    if (previous !== undefined && !fits(sends + day.sends, rounds + day.rounds)) {
      ranges.push({ from: start, to: previous });
      start = DateTime.fromISO(previous).plus({ days: 1 }).toISODate() as string;
      sends = 0;
      rounds = 0;
    }
    sends += day.sends;
    rounds += day.rounds;
    previous = day.date;
  }
  ranges.push({ from: start, to });
  return ranges;
}
