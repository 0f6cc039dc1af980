import { setTimeout as sleep } from "node:timers/promises";
import type { SelectedRound } from "./csv-writer.js";
import { appDate, type ParsedMoment, parseMoment } from "./dates.js";
import type { JsonReply } from "./http-util.js";
import { errorReply } from "./http-util.js";
import type { SandboxCampaign } from "./world/types.js";

export interface ReadDates {
  from?: ParsedMoment;
  to?: ParsedMoment;
}

export function readDates(
  body: Record<string, unknown>,
  required: boolean,
  timeZone: string,
): ReadDates | { error: JsonReply } {
  const out: ReadDates = {};
  for (const key of ["from", "to"] as const) {
    const value = body[key];
    if (value === undefined || value === null) {
      if (required) return { error: errorReply(400, `${key} is required (ISO 8601 date)`) };
      continue;
    }
    if (typeof value !== "string") {
      return { error: errorReply(400, `${key} must be an ISO 8601 string`) };
    }
    const parsed = parseMoment(value, timeZone);
    if (parsed === undefined) {
      return {
        error: errorReply(400, `${key} is not a valid ISO 8601 date or date-time: ${value}`),
      };
    }
    out[key] = parsed;
  }
  if (out.from !== undefined && out.to !== undefined && appDate(out.from) > appDate(out.to)) {
    return { error: errorReply(400, "from must not be after to") };
  }
  return out;
}

export interface Selection {
  rounds: SelectedRound[];
  /** Send records of the send groups (a control group sends nothing). */
  sends: number;
}

/**
 * Spec 4.2 rules 2 and 4: rounds by scheduled send time, aggregated ones only. For the limits of
 * spec 8 every (task, group) is a round, the control group included: spec 2.4 identifies a round
 * by `task_id`, `scheduled_at` and `group`, and control rows carry `group` = 대조군. A control
 * group adds a round but no sends.
 */
export function selectRounds(campaign: SandboxCampaign, fromMs: number, toMs: number): Selection {
  const selection: Selection = { rounds: [], sends: 0 };
  for (const task of campaign.tasks) {
    if (task.scheduled_at < fromMs || task.scheduled_at >= toMs || !task.aggregated) continue;
    for (const round of task.rounds) {
      selection.rounds.push({ task, round });
      if (!round.isControl) selection.sends += round.records;
    }
  }
  return selection;
}

export async function waitAtMost(
  work: Promise<void>,
  ms: number,
  stopSignal: AbortSignal,
): Promise<void> {
  const timer = new AbortController();
  const sleeping = sleep(ms, undefined, { signal: AbortSignal.any([timer.signal, stopSignal]) });
  try {
    await Promise.race([work, sleeping.catch(() => undefined)]);
  } finally {
    timer.abort();
  }
}
