import { describeWindowKst, formatMetricsParam } from "../../api/dates.js";
import { changesBetween } from "./change.js";
import type { OtherWindow } from "./fetch.js";
import type { CampaignMetricsArgs, CampaignOut, ComparisonOut, Sums } from "./schemas.js";
import { aggregatingIn, matches, sumAll } from "./totals.js";

/**
 * campaign_metrics' `comparison`: the other window's campaigns, filtered and summed exactly as
 * the asked window's are (so its totals equal a call over that window), and the change.
 */

export interface Compared {
  comparison: ComparisonOut;
  /** The campaigns shown, each with its sums in the other window when it had rounds there. */
  campaigns: CampaignOut[];
}

export function compareWith(input: {
  other: OtherWindow;
  args: CampaignMetricsArgs;
  now: number;
  /** The asked window's totals. */
  totals: Sums;
  shown: readonly CampaignOut[];
}): Compared {
  const { other, args } = input;
  const matched = other.campaigns.filter((c) => matches(c, args));
  const aggregating = aggregatingIn(other.campaigns, input.now);
  const totals = sumAll(matched, aggregating);
  const byId = new Map(matched.map((c) => [c._id, c]));
  const campaigns = input.shown.map((c) => {
    const there = byId.get(c._id);
    return there === undefined ? c : { ...c, previous: sumAll([there], aggregating) };
  });
  return {
    comparison: {
      compare_to: other.compareTo,
      task_from: formatMetricsParam(other.window.from),
      task_to: formatMetricsParam(other.window.to),
      kst: describeWindowKst(other.window),
      requests: other.requests,
      matched_campaigns: matched.length,
      totals,
      change: changesBetween(totals, input.totals),
    },
    campaigns,
  };
}
