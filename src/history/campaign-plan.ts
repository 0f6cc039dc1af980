import {
  type CampaignExportRecord,
  compareExports,
  eventsPartitions,
  type HistoryCatalogue,
  type KeptRound,
  type RoundRows,
  roundId,
} from "./catalogue.js";
import { eventsPartitionDir } from "./layout.js";

/**
 * What a commit does to the events partitions, decided from the catalogue alone (no file is
 * read): the rule "a send round is kept from the newest export that holds it" and the kept days
 * applied to round lists. Each partition (one campaign, one month) ends as one of:
 * - `move`: a new partition whose rows are exactly one staged file: the file becomes it;
 * - `rewrite`: its new file is the rows of `sources` whose (round, job_id) is in `keep`;
 * - `drop`: nothing of it is kept.
 * A partition no action names is left as it is.
 */
export type PartitionAction =
  | {
      kind: "move";
      dir: string;
      campaignId: string;
      month: string;
      file: string;
      keep: KeptRound[];
    }
  | {
      kind: "rewrite";
      dir: string;
      campaignId: string;
      month: string;
      /** Files the rows come from: the live file (relative) and/or staged files (absolute). */
      sources: { live: string | null; staged: string[] };
      keep: KeptRound[];
    }
  | { kind: "drop"; dir: string };

/** An export being added: its record and, per month, its staged files and their rounds. */
export interface IncomingExport {
  record: CampaignExportRecord;
  /** Every round of the file, also those older than the kept days. */
  staged: Map<string, { files: string[]; rounds: RoundRows[] }>;
}

/** True when the round's date (its scheduled_at's) is on or after `cutoff` (`YYYY-MM-DD`). */
export function keptOn(round: Pick<RoundRows, "scheduled_at">, cutoff: string | null): boolean {
  return cutoff === null || round.scheduled_at.slice(0, 10) >= cutoff;
}

export function planCampaign(
  catalogue: HistoryCatalogue,
  incoming: IncomingExport | undefined,
  cutoff: string | null,
): PartitionAction[] {
  const actions: PartitionAction[] = [];
  const byDir = new Map(eventsPartitions(catalogue).map((p) => [p.dir, p]));
  const touched = new Set<string>();
  if (incoming !== undefined) {
    const created = new Map(catalogue.exports.map((e) => [e.job_id, e]));
    const record = incoming.record;
    for (const [month, { files, rounds }] of incoming.staged) {
      const dir = eventsPartitionDir(record.campaign_id, month);
      touched.add(dir);
      const live = byDir.get(dir);
      const mine = rounds.filter((r) => keptOn(r, cutoff));
      const held = new Map((live?.rounds ?? []).map((r) => [roundId(r), r]));
      const wins = mine.filter((round) => {
        const other = held.get(roundId(round));
        if (other === undefined) return true;
        const otherExport = created.get(other.job_id);
        return otherExport === undefined || compareExports(record, otherExport) > 0;
      });
      const won = new Set(wins.map(roundId));
      const stays = (live?.rounds ?? []).filter((r) => keptOn(r, cutoff) && !won.has(roundId(r)));
      const keep = [...stays, ...wins.map((r) => ({ ...r, job_id: record.job_id }))].sort(byRound);
      const common = { dir, campaignId: record.campaign_id, month };
      // The staged file is the partition as it is only when every round in it is kept.
      const allStaged = wins.length === rounds.length;
      if (keep.length === 0) {
        if (live !== undefined) actions.push({ kind: "drop", dir });
      } else if (live === undefined && allStaged && files.length === 1) {
        actions.push({ kind: "move", ...common, file: files[0] as string, keep });
      } else if (wins.length > 0 || stays.length !== (live?.rounds.length ?? 0)) {
        actions.push({
          kind: "rewrite",
          ...common,
          sources: {
            live: stays.length > 0 ? (live?.file ?? null) : null,
            staged: wins.length > 0 ? files : [],
          },
          keep,
        });
      }
    }
  }
  // The kept days, over every other partition.
  for (const partition of byDir.values()) {
    if (touched.has(partition.dir)) continue;
    const keep = partition.rounds.filter((r) => keptOn(r, cutoff));
    if (keep.length === partition.rounds.length) continue;
    if (keep.length === 0) actions.push({ kind: "drop", dir: partition.dir });
    else {
      actions.push({
        kind: "rewrite",
        dir: partition.dir,
        campaignId: partition.campaign_id,
        month: partition.round_month,
        sources: { live: partition.file, staged: [] },
        keep,
      });
    }
  }
  return actions;
}

function byRound(a: KeptRound, b: KeptRound): number {
  const x = roundId(a);
  const y = roundId(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
