import { DateTime } from "luxon";
import { EXPORT_MAX_ROUNDS, EXPORT_MAX_SENDS } from "../api/limits.js";

/**
 * Which days of one campaign `sync` exports: the rounds of the window the history lacks, in as
 * few exports as keep re-reading held rounds small, each within the service's limits. Pure: the
 * same rounds, history and clock give the same exports, so a run started again after a kill asks
 * for the very exports the first run asked for, and the ledger reuses their jobs.
 */

/** One round (task) of the campaign in the window, as campaign_metrics lists it. */
export interface WindowRound {
  task_id: string;
  /** `YYYY-MM-DD HH:mm:ss` in the application's zone, as the export file writes it. */
  scheduled_at: string;
  /** Its calendar date in the application's zone: what an export's from/to select. */
  date: string;
  /** Epoch ms of its conversion deadline: before it, no export holds the round. */
  deadline: number;
  /** Epoch ms by which its aggregation is expected to have finished (api/round-readiness.ts). */
  expected: number;
  sends: number;
  /** Rounds of the file it makes: one per A/B group (an estimate on the safe side). */
  groups: number;
}

/** A round the history keeps (history's KeptRound, what the plan needs of it). */
export interface HeldRound {
  task_id: string | null;
  scheduled_at: string;
}

/** An export of the campaign the history holds (its catalogue record, what the plan needs). */
export interface HeldExport {
  /** The job's requested range as dates in the application's zone; null: unlimited. */
  fromDate: string | null;
  toDate: string | null;
  /** Epoch ms of the job's creation. */
  createdAt: number;
}

export type RoundState =
  /** The history keeps it. */
  | "held"
  /** Before the first day CRM_HISTORY_DAYS keeps: the history would not keep it. */
  | "past_kept_days"
  /** Its conversion deadline has not passed: no export can hold it yet. */
  | "pending"
  /** An export made after its deadline lacked it, and its aggregation may still be running. */
  | "aggregating"
  /** An export made well after its expected aggregation lacked it: the service has no rows. */
  | "absent"
  /** To export. */
  | "missing";

export interface PlannedExport {
  /** Inclusive dates in the application's zone. */
  from: string;
  to: string;
  /** Rounds of the window the range selects, and of them the ones the history lacks. */
  rounds: number;
  missing: number;
  sends: number;
}

export interface CampaignPlan {
  exports: PlannedExport[];
  states: Record<RoundState, number>;
}

export interface PlanInput {
  rounds: readonly WindowRound[];
  held: readonly HeldRound[];
  exports: readonly HeldExport[];
  now: number;
  /** The first date the history keeps (`YYYY-MM-DD`). */
  cutoff: string;
}

/**
 * Held rounds between two missing days at which one export becomes two: re-reading fewer is
 * cheaper than a creation of the budget, re-reading more is not.
 */
export const SPLIT_AT_HELD_ROUNDS = 3;

export function roundState(
  round: WindowRound,
  input: Pick<PlanInput, "exports" | "now" | "cutoff">,
  held: (round: WindowRound) => boolean,
): RoundState {
  if (held(round)) return "held";
  if (round.date < input.cutoff) return "past_kept_days";
  if (input.now < round.deadline) return "pending";
  // The newest held export that selected the round's day after its deadline, yet lacks it.
  const covering = input.exports
    .filter(
      (e) =>
        (e.fromDate === null || e.fromDate <= round.date) &&
        (e.toDate === null || round.date <= e.toDate) &&
        e.createdAt >= round.deadline,
    )
    .reduce<number | undefined>(
      (newest, e) => Math.max(newest ?? e.createdAt, e.createdAt),
      undefined,
    );
  if (covering === undefined) return "missing";
  if (covering >= round.expected) return "absent";
  return input.now >= round.expected ? "missing" : "aggregating";
}

/** The exports that bring the campaign's rounds of the window into the history. */
export function planCampaign(input: PlanInput): CampaignPlan {
  const byTask = new Set(input.held.filter((h) => h.task_id !== null).map((h) => h.task_id));
  const byTime = new Set(input.held.filter((h) => h.task_id === null).map((h) => h.scheduled_at));
  const isHeld = (r: WindowRound) => byTask.has(r.task_id) || byTime.has(r.scheduled_at);
  const states: Record<RoundState, number> = {
    held: 0,
    past_kept_days: 0,
    pending: 0,
    aggregating: 0,
    absent: 0,
    missing: 0,
  };
  const days = new Map<string, { missing: number; other: number; rounds: number; sends: number }>();
  for (const round of input.rounds) {
    const state = roundState(round, input, isHeld);
    states[state] += 1;
    const day = days.get(round.date) ?? { missing: 0, other: 0, rounds: 0, sends: 0 };
    if (state === "missing") day.missing += 1;
    else day.other += 1;
    day.rounds += round.groups;
    day.sends += round.sends;
    days.set(round.date, day);
  }
  const ordered = [...days.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const exports: PlannedExport[] = [];
  let current:
    | (PlannedExport & { heldSince: number; roundsSince: number; sendsSince: number })
    | undefined;
  for (const [date, day] of ordered) {
    if (day.missing === 0) {
      if (current !== undefined) {
        current.heldSince += day.other;
        current.roundsSince += day.rounds;
        current.sendsSince += day.sends;
      }
      continue;
    }
    const rounds = (current?.rounds ?? 0) + (current?.roundsSince ?? 0) + day.rounds;
    const sends = (current?.sends ?? 0) + (current?.sendsSince ?? 0) + day.sends;
    const extend =
      current !== undefined &&
      current.heldSince < SPLIT_AT_HELD_ROUNDS &&
      rounds <= EXPORT_MAX_ROUNDS &&
      sends <= EXPORT_MAX_SENDS;
    if (current !== undefined && extend) {
      current.to = date;
      current.rounds = rounds;
      current.sends = sends;
      current.missing += day.missing;
      current.heldSince = 0;
      current.roundsSince = 0;
      current.sendsSince = 0;
      continue;
    }
    if (current !== undefined) exports.push(finished(current));
    current = {
      from: date,
      to: date,
      rounds: day.rounds,
      missing: day.missing,
      sends: day.sends,
      heldSince: 0,
      roundsSince: 0,
      sendsSince: 0,
    };
  }
  if (current !== undefined) exports.push(finished(current));
  return { exports, states };
}

function finished(open: PlannedExport): PlannedExport {
  return {
    from: open.from,
    to: open.to,
    rounds: open.rounds,
    missing: open.missing,
    sends: open.sends,
  };
}

/** Halves a range the service refused as too large (LimitExceeded); undefined for one day. */
export function halves(
  range: { from: string; to: string },
  zone: string,
): [{ from: string; to: string }, { from: string; to: string }] | undefined {
  const from = DateTime.fromISO(range.from, { zone });
  const to = DateTime.fromISO(range.to, { zone });
  const days = Math.round(to.diff(from, "days").days);
  if (days < 1) return undefined;
  const firstEnd = from.plus({ days: Math.floor(days / 2) });
  return [
    { from: range.from, to: firstEnd.toISODate() as string },
    { from: firstEnd.plus({ days: 1 }).toISODate() as string, to: range.to },
  ];
}
