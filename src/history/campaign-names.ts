import { DateTime } from "luxon";
import { formatMetricsParam } from "../api/dates.js";
import type { MetricsQuery, MetricsResponse } from "../api/schemas.js";
import type { CallOptions, CrmApi } from "../api/types.js";
import { log } from "../log.js";

/**
 * Campaign names for `history_campaigns`. An export's file and its job name no campaign; only
 * campaign_metrics does. So a process remembers the names its own campaign_metrics requests
 * returned (the model usually asks for them before it exports), and for a campaign it has not
 * seen asks once, for a window of two minutes around one of the campaign's rounds: the smallest
 * answer that holds the campaign. A lookup that fails leaves the name unknown (NULL); a later
 * export of the campaign, a later start of a server or `sync` fills it.
 */

/** The longest name kept; a longer one is cut (the service's names are text from outside). */
export const MAX_CAMPAIGN_NAME_CHARS = 200;

/** Names remembered per process, the oldest forgotten first. */
const MAX_REMEMBERED = 5000;

/** Either side of the round's scheduled time in the lookup's window (the file has seconds). */
const LOOKUP_MARGIN_SECONDS = 60;

/**
 * A name as the history keeps it: control and bidirectional-override characters (which could
 * reorder or hide what a reader sees) become spaces, runs of white space one space, and the
 * rest is cut to MAX_CAMPAIGN_NAME_CHARS; null when nothing is left. Markdown is left as
 * written: whoever shows a name escapes it for where it goes (format.ts tableCell).
 */
export function keptCampaignName(name: string | null | undefined): string | null {
  if (name === null || name === undefined) return null;
  const clean = name
    .replace(/[\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
  if (clean === "") return null;
  const chars = [...clean];
  return chars.length <= MAX_CAMPAIGN_NAME_CHARS
    ? clean
    : `${chars.slice(0, MAX_CAMPAIGN_NAME_CHARS - 1).join("")}…`;
}

type MetricsCall = (query: MetricsQuery, options?: CallOptions) => Promise<MetricsResponse>;

/** Where the history's keeper finds a campaign's name (runtime.ts builds one per process). */
export class CampaignNames {
  private readonly known = new Map<string, string>();
  /** Campaigns a lookup answered without: not asked again by this process. */
  private readonly notFound = new Set<string>();
  /** Lookups under way: a second caller for the same campaign joins the first. */
  private readonly asking = new Map<string, Promise<string | undefined>>();
  /** campaign_metrics requests this process made for names (for tests and the log). */
  lookups = 0;

  constructor(
    /** One campaign_metrics request (the runtime's client). */
    private readonly metrics: MetricsCall,
    /** The application's zone: the one the files' `scheduled_at` is written in. */
    private readonly zone: string,
  ) {}

  /** Remembers the names of a campaign_metrics answer. */
  remember(campaigns: ReadonlyArray<{ _id: string; name: string }>): void {
    for (const campaign of campaigns) {
      const name = keptCampaignName(campaign.name);
      if (name === null) continue;
      this.known.delete(campaign._id);
      this.known.set(campaign._id, name);
      this.notFound.delete(campaign._id);
    }
    for (const id of this.known.keys()) {
      if (this.known.size <= MAX_REMEMBERED) break;
      this.known.delete(id);
    }
  }

  /** The name this process has seen, without asking the service. */
  remembered(campaignId: string): string | undefined {
    return this.known.get(campaignId);
  }

  /**
   * The campaign's name: remembered, else one campaign_metrics request around `scheduledAt` (a
   * round of the campaign, `YYYY-MM-DD HH:mm:ss` as in its file). Undefined when the service does
   * not name it there or the request failed (logged; never thrown).
   */
  find(campaignId: string, scheduledAt: string, signal?: AbortSignal): Promise<string | undefined> {
    const known = this.known.get(campaignId);
    if (known !== undefined || this.notFound.has(campaignId)) return Promise.resolve(known);
    let pending = this.asking.get(campaignId);
    if (pending === undefined) {
      pending = this.lookUp(campaignId, scheduledAt, signal).finally(() =>
        this.asking.delete(campaignId),
      );
      this.asking.set(campaignId, pending);
    }
    return pending;
  }

  private async lookUp(
    campaignId: string,
    scheduledAt: string,
    signal: AbortSignal | undefined,
  ): Promise<string | undefined> {
    const at = DateTime.fromFormat(scheduledAt, "yyyy-MM-dd HH:mm:ss", { zone: this.zone });
    if (!at.isValid) return undefined;
    try {
      this.lookups += 1;
      const response = await this.metrics(
        {
          task_from: formatMetricsParam(at.minus({ seconds: LOOKUP_MARGIN_SECONDS })),
          task_to: formatMetricsParam(at.plus({ seconds: LOOKUP_MARGIN_SECONDS })),
        },
        { signal },
      );
      this.remember(response.campaigns);
    } catch (error) {
      log.warn("history: the campaign's name could not be looked up (it stays unknown)", {
        campaign_id: campaignId,
        error: error instanceof Error ? error.message : String(error),
      });
      return undefined;
    }
    const found = this.known.get(campaignId);
    if (found === undefined) this.notFound.add(campaignId);
    return found;
  }
}

/** The client, with every campaign_metrics answer's names remembered in `names`. */
export function rememberingNames(api: CrmApi, names: CampaignNames): CrmApi {
  return {
    recommend: (slotKey, body, options) => api.recommend(slotKey, body, options),
    createExportJob: (body, options) => api.createExportJob(body, options),
    getExportJob: (jobId, options) => api.getExportJob(jobId, options),
    downloadExport: (job, options) => api.downloadExport(job, options),
    async campaignMetrics(query, options) {
      const response = await api.campaignMetrics(query, options);
      names.remember(response.campaigns);
      return response;
    },
  };
}
