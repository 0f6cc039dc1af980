import { formatCount } from "../../format.js";
import type { CampaignRound } from "../schemas.js";

/**
 * Rows of rounds[] (one per round and group: an A/B round with a control group is three) counted
 * as such, with the send rounds they belong to, so that 38 rows of a 23-round export never read
 * as 38 rounds: "38 round-and-group rows of 19 send rounds", or "19 send rounds" when each of
 * them has one group. Kept free of the reading code: the report page bundles it.
 */
export function roundRowsPhrase(rows: CampaignRound[]): string {
  // JSON of the pair: no separator a task_id could contain can merge two rounds.
  const sends = new Set(rows.map((r) => JSON.stringify([r.task_id, r.scheduled_at]))).size;
  return rows.length === sends
    ? plural(sends, "send round")
    : `${plural(rows.length, "round-and-group row")} of ${plural(sends, "send round")}`;
}

function plural(count: number, noun: string): string {
  return `${formatCount(count)} ${noun}${count === 1 ? "" : "s"}`;
}
