import { CONTROL_GROUP } from "../analysis/campaign/columns.js";
import { ratio, round6 } from "../analysis/stats.js";
import type { QueryLimits } from "../config.js";
import { sqlString } from "../query/events-view.js";
import { withDeadline, withSession } from "../query/run.js";
import { toJsonValue } from "../query/values.js";
import { type HistoryCampaign, historyCampaigns } from "./campaigns.js";
import { eventsPartitions, type HistoryCatalogue } from "./catalogue.js";
import { type HistorySource, historySessionOptions, withHistoryTables } from "./query.js";

/**
 * A campaign against its channel's own history (summarize_export's `baseline`): each rate of the
 * campaign beside the median and quartiles of the same rate over the last campaigns the history
 * keeps on the same channel mix, flagged when it lies outside 1.5 IQR (Tukey's fences).
 *
 * The rates follow summarize_export's totals, computed the same way from the history's rows:
 * - delivery: received / (received + failed) (the summary's success_rate, "delivered");
 * - open: opens / received, rows (the summary's open_rate, 건);
 * - click: landing clicks / received, rows;
 * - conversion: send-group conversions / opens (the summary's conversion_rate: the control
 *   group's conversions have no opens behind them);
 * - failure: failed / sent (sends still unsettled count in neither delivery nor failure).
 * A rate whose denominator is 0 is 0, the summary's rule.
 */

export const BASELINE_RATES = ["delivery", "open", "click", "conversion", "failure"] as const;
export type BaselineRate = (typeof BASELINE_RATES)[number];
export type CampaignRates = Record<BaselineRate, number>;

/** Fewer other campaigns than this on the channel: no baseline. */
export const BASELINE_MIN_CAMPAIGNS = 3;
/** The most recent campaigns of the channel a baseline is drawn from. */
export const BASELINE_MAX_CAMPAIGNS = 20;
/** The baseline's statement stops after this long; the summary goes out without it. */
export const BASELINE_TIMEOUT_SECONDS = 5;

/** The counts a campaign's rates come from, named as in summarize_export's totals. */
export interface RateCounts {
  sent: number;
  received: number;
  failed: number;
  opens: number;
  clicks: number;
  send_group_conversions: number;
}

/** A campaign's rates, rounded to 6 decimals as the summary's. */
export function campaignRates(c: RateCounts): CampaignRates {
  const exact = exactRates(c);
  return Object.fromEntries(
    BASELINE_RATES.map((rate) => [rate, round6(exact[rate])]),
  ) as CampaignRates;
}

/** Unrounded: the quantiles are taken over these, and only they are rounded. */
function exactRates(c: RateCounts): CampaignRates {
  return {
    delivery: ratio(c.received, c.received + c.failed),
    open: ratio(c.opens, c.received),
    click: ratio(c.clicks, c.received),
    conversion: ratio(c.send_group_conversions, c.opens),
    failure: ratio(c.failed, c.sent),
  };
}

export interface BaselineMetric {
  value: number;
  median: number;
  p25: number;
  p75: number;
  flag: "above" | "below" | null;
}

export interface CampaignBaseline {
  /** The campaign's channel, or its channels joined by `+` (compared with the same mix). */
  channel: string;
  /** Other campaigns the quantiles are over. */
  campaigns: number;
  /** First and last round dates (YYYY-MM-DD, local time as in the files) of those campaigns. */
  window: { from: string; to: string };
  metrics: Record<BaselineRate, BaselineMetric>;
}

export type BaselineAnswer =
  | { status: "ready"; baseline: CampaignBaseline }
  /** `campaigns` other campaigns of `channel` kept; `needed` more make a baseline. */
  | { status: "too_few"; channel: string; campaigns: number; needed: number };

export interface BaselineRequest {
  /** The campaign's channels (of its send records): the mix other campaigns must share. */
  channels: readonly string[];
  /** The campaign's own rates (from its summary). */
  values: CampaignRates;
  /** The campaign itself, where known (the export job's campaign_id): never its own baseline. */
  campaignId?: string | undefined;
  /** Its file's task_ids: a kept campaign holding one of them is the same campaign. */
  taskIds: readonly string[];
  /** Its file: a kept export read from the same file is the same campaign. */
  sourcePath?: string | undefined;
  /** summarize_export's input: what counts as a conversion in every campaign. */
  conversionEventType?: string | undefined;
  limits: QueryLimits;
  spillParent: string;
  signal?: AbortSignal | undefined;
  maxCampaigns?: number | undefined;
}

/** The channel mix as the baseline names it: sorted, joined by `+`. */
export function channelMix(channels: readonly string[]): string {
  return [...new Set(channels)].sort().join("+");
}

/**
 * The baseline of a campaign, or how many more campaigns of its channel the history needs. The
 * campaigns compared are chosen from the catalogue alone (channels, last round); only their
 * rates are read from the Parquet files, within the request's time limit.
 */
export async function campaignBaseline(
  history: HistorySource,
  request: BaselineRequest,
): Promise<BaselineAnswer> {
  const channel = channelMix(request.channels);
  const max = request.maxCampaigns ?? BASELINE_MAX_CAMPAIGNS;
  const tooFew = (campaigns: number): BaselineAnswer => ({
    status: "too_few",
    channel,
    campaigns,
    needed: BASELINE_MIN_CAMPAIGNS - campaigns,
  });
  return withHistoryTables(history, request.conversionEventType, async (extra, catalogue) => {
    const chosen = peerCampaigns(catalogue, request).slice(0, max);
    if (chosen.length < BASELINE_MIN_CAMPAIGNS) return tooFew(chosen.length);
    const session = historySessionOptions(extra, request);
    const rates = await withSession(session, (_duck, opened) =>
      withDeadline(opened, session, async () => {
        const reader = await opened.connection.runAndReadAll(ratesSql(chosen));
        return reader.getRows().map((row) =>
          exactRates({
            sent: count(row[1]),
            received: count(row[2]),
            failed: count(row[3]),
            opens: count(row[4]),
            clicks: count(row[5]),
            send_group_conversions: count(row[6]),
          }),
        );
      }),
    );
    // A kept campaign always has rows; should its files hold none, it is not counted.
    if (rates.length < BASELINE_MIN_CAMPAIGNS) return tooFew(rates.length);
    const metrics = Object.fromEntries(
      BASELINE_RATES.map((rate) => [
        rate,
        baselineMetric(
          request.values[rate],
          rates.map((r) => r[rate]),
        ),
      ]),
    ) as Record<BaselineRate, BaselineMetric>;
    return {
      status: "ready",
      baseline: {
        channel,
        campaigns: rates.length,
        window: {
          from: chosen.map((c) => c.first_scheduled_at.slice(0, 10)).sort()[0] as string,
          to: chosen
            .map((c) => c.last_scheduled_at.slice(0, 10))
            .sort()
            .at(-1) as string,
        },
        metrics,
      },
    };
  });
}

/**
 * Other campaigns with exactly the campaign's channel mix, most recent last round first. The
 * catalogue's channels are those of each export's send records (`control` excluded), as the
 * summary's by_channel.
 */
function peerCampaigns(catalogue: HistoryCatalogue, request: BaselineRequest): HistoryCampaign[] {
  const mix = channelMix(request.channels);
  const same = new Set<string>();
  if (request.campaignId !== undefined) same.add(request.campaignId);
  const tasks = new Set(request.taskIds);
  for (const partition of eventsPartitions(catalogue)) {
    if (partition.rounds.some((r) => r.task_id !== null && tasks.has(r.task_id))) {
      same.add(partition.campaign_id);
    }
  }
  for (const record of catalogue.exports) {
    if (record.kind === "campaign_event_data" && record.source.path === request.sourcePath) {
      same.add(record.campaign_id);
    }
  }
  return historyCampaigns(catalogue)
    .filter((c) => !same.has(c.campaign_id) && channelMix(c.channels) === mix)
    .sort(
      (a, b) =>
        compareText(b.last_scheduled_at, a.last_scheduled_at) ||
        compareText(a.campaign_id, b.campaign_id),
    );
}

/** Per campaign, the counts of its rates, by the roles summarize_export counts with. */
function ratesSql(campaigns: readonly HistoryCampaign[]): string {
  const ids = campaigns.map((c) => sqlString(c.campaign_id)).join(", ");
  const role = (name: string) => `count(*) FILTER (WHERE event_role = '${name}')`;
  return `SELECT campaign_id, ${role("sent")}, ${role("received")}, ${role("failed")}, ${role("open")}, ${role("click")}, count(*) FILTER (WHERE event_role = 'conversion' AND "group" IS DISTINCT FROM ${sqlString(CONTROL_GROUP)}) FROM history WHERE campaign_id IN (${ids}) GROUP BY campaign_id ORDER BY campaign_id`;
}

function count(value: unknown): number {
  return Number(toJsonValue(value as Parameters<typeof toJsonValue>[0]));
}

/**
 * The q-quantile of an ascending-sorted list by linear interpolation between the two nearest
 * ranks (Hyndman and Fan's type 7; DuckDB's quantile_cont, R's and NumPy's default); NaN when
 * the list is empty.
 */
export function quantileLinear(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const h = (sorted.length - 1) * q;
  const lo = Math.floor(h);
  const below = sorted[lo] as number;
  const above = sorted[Math.min(lo + 1, sorted.length - 1)] as number;
  return below + (h - lo) * (above - below);
}

/** Far enough from a fence that rounding to 6 decimals never flips a flag. */
const FENCE_SLACK = 1e-9;

/** A value against others: median, quartiles and Tukey's flag (outside 1.5 IQR). */
export function baselineMetric(value: number, others: readonly number[]): BaselineMetric {
  const sorted = [...others].sort((a, b) => a - b);
  const p25 = round6(quantileLinear(sorted, 0.25));
  const p75 = round6(quantileLinear(sorted, 0.75));
  const iqr = p75 - p25;
  const flag =
    value > p75 + 1.5 * iqr + FENCE_SLACK
      ? "above"
      : value < p25 - 1.5 * iqr - FENCE_SLACK
        ? "below"
        : null;
  return { value, median: round6(quantileLinear(sorted, 0.5)), p25, p75, flag };
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
