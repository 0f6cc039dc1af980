import { KST, zoneLabel } from "../api/dates.js";
import { callHint } from "../format.js";
import { addDays, kstDate, minuteIn, today } from "./calendar.js";
import type { CampaignExportPlan, DateRange } from "./export-plan.js";
import { DEFAULT_DAYS } from "./export-plan.js";

/**
 * The opening of a campaign prompt: the period in words and the steps up to the downloaded
 * file(s), every call written as `tool {JSON arguments}` so the model (and the prompts' test)
 * reads exactly what to send. `<job_id>` stands for the job_id a start_export call returns.
 */
export interface ExportSteps {
  /** "over ..." / "from ... to ...": what the prompt reads. */
  period: string;
  /** Lines to show before the numbered steps (why the period is what it is). */
  notes: string[];
  /** The numbered steps that fetch the data. */
  steps: string[];
  /** Whether the steps end with export jobs to summarize (false: only live metrics). */
  exports: boolean;
}

/** The placeholder the steps use for a job's ID. */
export const JOB_ID = "<job_id>";

/** How far campaign_metrics looks for a campaign's rounds when the prompt knows none. */
const FIND_ROUNDS_DAYS = 730;

export function campaignExportSteps(
  plan: CampaignExportPlan,
  campaignId: string,
  now: number,
  zone: string,
): ExportSteps {
  const label = zoneLabel(zone);
  const follow =
    "if its result is not done, run the call its next_step names (check_export) until the file is downloaded";
  switch (plan.kind) {
    case "export": {
      const calls = plan.ranges.map((r) => startExport(campaignId, r));
      const first = plan.ranges[0] as DateRange;
      const last = plan.ranges[plan.ranges.length - 1] as DateRange;
      const span = `${first.from} to ${last.to} (inclusive, ${label})`;
      const period = plan.defaulted
        ? `over its last ${DEFAULT_DAYS} days of aggregated rounds, ${span}`
        : `from ${span}`;
      const notes = plan.note === undefined ? [] : [plan.note];
      const steps =
        calls.length === 1
          ? [`${calls[0]}; ${follow}.`]
          : [
              `Export it in ${calls.length} jobs, one per range: ${calls.join(", ")}. For each, ${follow}.`,
            ];
      return { period, notes, steps, exports: true };
    }
    case "as_given": {
      const period =
        plan.from !== undefined && plan.to !== undefined
          ? `from ${plan.from} to ${plan.to} (inclusive, ${label})`
          : plan.from !== undefined
            ? `from ${plan.from} (${label}) on`
            : `up to ${plan.to} (inclusive, ${label})`;
      const range = {
        ...(plan.from === undefined ? {} : { from: plan.from }),
        ...(plan.to === undefined ? {} : { to: plan.to }),
      };
      return {
        period,
        notes: [],
        steps: [
          `${startExport(campaignId, range)}; ${follow}. If the service answers that the range is too large or not aggregated yet, run the calls its error names instead.`,
        ],
        exports: true,
      };
    }
    case "not_aggregated": {
      const metrics = callHint("campaign_metrics", {
        campaign_ids: [campaignId],
        include_tasks: true,
        task_from: kstDate(plan.earliestScheduledAt),
        task_to: today(now, KST),
      });
      return {
        period: "from the live figures of its recent rounds",
        notes: [
          `Its ${plan.rounds} round(s) ${plan.where} (the latest sent ${minuteIn(plan.latestSentAt, zone)} ${label}) are still being aggregated: an export holds a round only after its conversion deadline and the service's aggregation, expected from about ${minuteIn(plan.readyAt, zone)} ${label}. No export can hold them before then.`,
        ],
        steps: [
          `${metrics} for the rounds' live figures (sends, opens, purchases, revenue per round; no A/B group or control split).`,
        ],
        exports: false,
      };
    }
    case "find_rounds": {
      const metrics = callHint("campaign_metrics", {
        campaign_ids: [campaignId],
        include_tasks: true,
        sort_by: "latest",
        task_from: addDays(today(now, KST), -FIND_ROUNDS_DAYS),
        task_to: today(now, KST),
      });
      return {
        period: "over its most recent rounds",
        notes: [`No export range was set here: ${plan.why}.`],
        steps: [
          `${metrics} to find its rounds.`,
          `Run the start_export call(s) that result names in next_calls (it splits a period too large for one job); for each, ${follow}.`,
        ],
        exports: true,
      };
    }
  }
}

/** The summary step, the same for one job or several. */
export function summarizeStep(extra: Record<string, unknown>, several: string): string {
  return `${callHint("summarize_export", { job_id: JOB_ID, ...extra })} for each export job (${JOB_ID} is the job_id start_export returned); ${several}`;
}

function startExport(campaignId: string, range: { from?: string; to?: string }): string {
  return callHint("start_export", {
    type: "campaign_event_data",
    campaign_id: campaignId,
    ...range,
  });
}
