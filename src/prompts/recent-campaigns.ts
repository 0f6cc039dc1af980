import { MAX_METRICS_WINDOW_DAYS } from "../api/limits.js";
import type { MetricsCampaign } from "../api/schemas.js";
import { log } from "../log.js";
import type { ToolRuntime } from "../mcp/tool.js";

const CACHE_MS = 5 * 60_000;
const DAY_MS = 86_400_000;

/** The campaigns the service reports, and the start of the window they were asked for. */
export interface RecentCampaigns {
  campaigns: MetricsCampaign[];
  /** Epoch ms: rounds scheduled before this are not in `campaigns`. */
  since: number;
}

/**
 * The service's campaigns with a round in the widest metrics window, MAX_METRICS_WINDOW_DAYS (one metrics request, the widest the
 * endpoint takes; it costs no export budget), cached for five minutes: argument completion and
 * the prompts' export ranges both read them. A slow or failing service gives undefined, never an
 * error: a prompt or a completion still answers with what it knows.
 */
export function recentCampaignsLookup(runtime: ToolRuntime) {
  let cached: { at: number; value: RecentCampaigns } | undefined;
  let pending: Promise<RecentCampaigns | undefined> | undefined;

  const ask = async (deadlineMs: number): Promise<RecentCampaigns | undefined> => {
    try {
      const api = await runtime.api();
      const to = runtime.now();
      const since = to - MAX_METRICS_WINDOW_DAYS * DAY_MS;
      const response = await api.campaignMetrics(
        { task_from: new Date(since).toISOString(), task_to: new Date(to).toISOString() },
        { deadline: Date.now() + deadlineMs },
      );
      const value = { campaigns: response.campaigns, since };
      cached = { at: Date.now(), value };
      return value;
    } catch (error) {
      log.debug("recent campaigns: service not asked", { error: String(error) });
      return undefined;
    }
  };

  return (deadlineMs: number): Promise<RecentCampaigns | undefined> => {
    if (cached !== undefined && Date.now() - cached.at < CACHE_MS) {
      return Promise.resolve(cached.value);
    }
    // Completion fires on every keystroke: one request in flight serves them all.
    pending ??= ask(deadlineMs).finally(() => {
      pending = undefined;
    });
    return pending;
  };
}

export type RecentCampaignsLookup = ReturnType<typeof recentCampaignsLookup>;
