import { formatCount } from "../../format.js";
import type { CampaignRound, CampaignSummary } from "../schemas.js";
import { CONTROL_GROUP } from "./columns.js";

/**
 * Send rounds as a reader counts them: one per task_id + scheduled_at, however many groups
 * (A/B arms, control) it was split into. The contract's rounds[] stays one per group.
 */
export function scheduleOf(rounds: CampaignRound[]): CampaignSummary["schedule"] {
  const sends = new Set<string>();
  const groups = new Set<string>();
  let first: string | null = null;
  let last: string | null = null;
  for (const r of rounds) {
    // JSON of the pair: no separator a task_id could contain can merge two rounds.
    sends.add(JSON.stringify([r.task_id, r.scheduled_at]));
    groups.add(r.group);
    // `YYYY-MM-DD HH:mm:ss` (spec 2.4) sorts as text.
    if (first === null || r.scheduled_at < first) first = r.scheduled_at;
    if (last === null || r.scheduled_at > last) last = r.scheduled_at;
  }
  return {
    send_rounds: sends.size,
    groups: [...groups].sort(),
    first_scheduled_at: first,
    last_scheduled_at: last,
  };
}

/** "1 send round (3 groups incl. control)", "2 send rounds", ... */
export function roundsPhrase(s: CampaignSummary): string {
  const { send_rounds: count } = s.schedule;
  // A round with no group is not an A/B arm.
  const groups = s.schedule.groups.filter((g) => g !== "");
  const head = `${formatCount(count)} send round${count === 1 ? "" : "s"}`;
  if (groups.length < 2) return head;
  const control = groups.includes(CONTROL_GROUP) ? " incl. control" : "";
  return `${head} (${groups.length} groups${control})`;
}
