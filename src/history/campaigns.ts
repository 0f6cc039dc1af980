import {
  type CampaignExportRecord,
  campaignExports,
  compareExports,
  eventsPartitions,
  type HistoryCatalogue,
  type KeptRound,
} from "./catalogue.js";

/** One campaign as the history holds it: the `history_campaigns` table's row. */
export interface HistoryCampaign {
  campaign_id: string;
  /** The newest name an export was added with; null when none was given. */
  name: string | null;
  /** Channels of its exports' send-record rows. */
  channels: string[];
  rounds: number;
  /** `YYYY-MM-DD HH:mm:ss`, local time as in the files. */
  first_scheduled_at: string;
  last_scheduled_at: string;
  rows: number;
  /** The exports its kept rounds come from, oldest first. */
  exports: string[];
}

/** Campaigns with at least one round kept, by campaign_id. */
export function historyCampaigns(catalogue: HistoryCatalogue): HistoryCampaign[] {
  const records = new Map<string, CampaignExportRecord[]>();
  for (const record of campaignExports(catalogue)) {
    records.set(record.campaign_id, [...(records.get(record.campaign_id) ?? []), record]);
  }
  const rounds = new Map<string, KeptRound[]>();
  for (const partition of eventsPartitions(catalogue)) {
    rounds.set(partition.campaign_id, [
      ...(rounds.get(partition.campaign_id) ?? []),
      ...partition.rounds,
    ]);
  }
  const out: HistoryCampaign[] = [];
  for (const [campaignId, kept] of rounds) {
    if (kept.length === 0) continue;
    const exports = (records.get(campaignId) ?? []).sort(compareExports);
    const contributing = new Set(kept.map((r) => r.job_id));
    const times = kept.map((r) => r.scheduled_at).sort();
    out.push({
      campaign_id: campaignId,
      name: exports.findLast((e) => e.campaign_name !== null)?.campaign_name ?? null,
      channels: [...new Set(exports.flatMap((e) => e.channels))].sort(),
      rounds: kept.length,
      first_scheduled_at: times[0] as string,
      last_scheduled_at: times.at(-1) as string,
      rows: kept.reduce((sum, r) => sum + r.rows, 0),
      exports: exports.filter((e) => contributing.has(e.job_id)).map((e) => e.job_id),
    });
  }
  return out.sort((a, b) => (a.campaign_id < b.campaign_id ? -1 : 1));
}

/** The rounds the history keeps for a campaign, by scheduled_at (what `sync` compares with). */
export function keptRounds(catalogue: HistoryCatalogue, campaignId: string): KeptRound[] {
  return eventsPartitions(catalogue)
    .filter((p) => p.campaign_id === campaignId)
    .flatMap((p) => p.rounds)
    .sort((a, b) =>
      a.scheduled_at < b.scheduled_at ? -1 : a.scheduled_at > b.scheduled_at ? 1 : 0,
    );
}

/**
 * The export records to put so that each campaign of `names` (campaign_id to a name as
 * keptCampaignName leaves it) is shown under that name: its newest export's record, where that
 * names it otherwise or not at all. Campaigns the history does not hold are left out.
 */
export function renamedExports(
  catalogue: HistoryCatalogue,
  names: ReadonlyMap<string, string>,
): CampaignExportRecord[] {
  const newest = new Map<string, CampaignExportRecord>();
  for (const record of campaignExports(catalogue)) {
    const held = newest.get(record.campaign_id);
    if (held === undefined || compareExports(held, record) < 0) {
      newest.set(record.campaign_id, record);
    }
  }
  const out: CampaignExportRecord[] = [];
  for (const [campaignId, name] of names) {
    const record = newest.get(campaignId);
    if (record !== undefined && record.campaign_name !== name) {
      out.push({ ...record, campaign_name: name });
    }
  }
  return out;
}
