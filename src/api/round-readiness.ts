import { AGGREGATION_GRACE_HOURS } from "./limits.js";
import type { MetricsCampaign, MetricsTask } from "./schemas.js";

const HOUR_MS = 3_600_000;

/**
 * When a round can be in an export. Spec 4.2 rule 4 takes only rounds whose performance
 * aggregation has finished, and the service does not say when that is; it cannot be before the
 * round's conversion deadline (its conversions are read up to it, rule 3). Two readings:
 * - `deadline`: the conversion deadline after the send; before it, the round is certainly not
 *   in an export;
 * - `expected`: the deadline plus AGGREGATION_GRACE_HOURS, the estimate campaign_metrics uses
 *   to flag rounds that may still be aggregating.
 * A unit the spec does not name is read as days, the longest it names, to stay on the safe side.
 */
export function roundReadiness(
  task: MetricsTask,
  campaign: MetricsCampaign,
): { deadline: number; expected: number } {
  const { window_unit: unit, window_amount: amount } = campaign.conversion;
  const deadline =
    Date.parse(task.sent_at ?? task.scheduled_at) +
    amount * (unit === "h" ? HOUR_MS : 24 * HOUR_MS);
  return { deadline, expected: deadline + AGGREGATION_GRACE_HOURS * HOUR_MS };
}
