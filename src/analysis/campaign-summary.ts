import { finishCampaignSummary } from "./campaign-finish.js";
import { tallyCampaignRows } from "./campaign-row-pass.js";
import type { CampaignSummary } from "./schemas.js";

/**
 * Campaign CSV summary (spec 2.4 and 6) in one streaming pass over the file. Only the columns a
 * figure needs are decoded, and only on the rows that need them; user ids are never turned into
 * strings (see hash-table.ts).
 */

export interface CampaignSummaryOptions {
  conversionEventType?: string;
  timeZone?: string;
  signal?: AbortSignal;
}

/** Summarizes a campaign export CSV at `path` (already resolved and size-checked). */
export async function summarizeCampaignCsv(
  path: string,
  bytes: number,
  options: CampaignSummaryOptions = {},
): Promise<CampaignSummary> {
  return finishCampaignSummary(await tallyCampaignRows(path, bytes, options));
}
