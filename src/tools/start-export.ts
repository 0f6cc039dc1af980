import { DateTime } from "luxon";
import { z } from "zod";
import { resolveExportRange } from "../api/dates.js";
import {
  EXPORT_CREATE_LIMIT,
  EXPORT_CREATE_WINDOW_SECONDS,
  EXPORT_MAX_ROUNDS,
  EXPORT_MAX_SENDS,
  sendsText,
} from "../api/limits.js";
import type { CreateExportJobRequest } from "../api/schemas.js";
import { budgetForOutput, describeBudget } from "../exports/budget-and-range.js";
import type { ExportContext } from "../exports/errors.js";
import { followToResult } from "../exports/export-flow.js";
import { describeJob } from "../exports/export-result.js";
import { findOrCreateJob, type WantedExport } from "../exports/find-or-create.js";
import { exportJobField, exportResultFields } from "../exports/job-result-schema.js";
import { DEFAULT_WAIT_SECONDS } from "../exports/wait-seconds.js";
import { requestKey } from "../ledger/request-key.js";
import { errorText } from "../mcp/error-text.js";
import {
  checkWaitSeconds,
  dateParam,
  exportTypeParam,
  resultBase,
  waitSecondsParam,
} from "../mcp/params.js";
import { defineTool } from "../mcp/tool.js";
import { ToolInputError } from "../mcp/tool-errors.js";
import { blankToUndefined } from "../text-input.js";

// Strict: a misspelled or unknown argument is refused by name instead of silently dropped.
const inputSchema = z.strictObject({
  type: exportTypeParam,
  campaign_id: z.string().optional().describe("campaign_metrics' `_id`; for campaign_event_data."),
  scenario_id: z.string().optional().describe("For scenario_daily_metrics."),
  from: dateParam("First day, inclusive (campaigns: by scheduled send; required for scenarios)"),
  to: dateParam("Last day, inclusive (required for scenarios)"),
  wait_seconds: waitSecondsParam,
  force: z
    .boolean()
    .optional()
    .describe("true: a new job even where an identical earlier one could be reused."),
});

const outputSchema = z.object({
  ...resultBase,
  ...exportResultFields,
  job: exportJobField,
  done: z.boolean().describe("true when the job is completed or failed."),
  reused: z
    .boolean()
    .describe("true when an identical earlier job was reused instead of creating one."),
  reused_created_at: z
    .string()
    .optional()
    .describe("When the reused job was created: its data is as of then."),
});

export default defineTool({
  name: "start_export",
  title: "Start an export job",
  description: `Create an export job (campaign raw events as CSV, or scenario daily metrics as XLSX), wait up to wait_seconds and download the file. Use after campaign_metrics found the campaign; then summarize_export or query_export.
Returns job and file_path once downloaded, else the exact check_export call to continue.
Limits: ${EXPORT_CREATE_LIMIT} accepted creations per ${EXPORT_CREATE_WINDOW_SECONDS / 60} minutes per application; identical requests reuse the earlier job unless force. A campaign range holds at most ${EXPORT_MAX_ROUNDS} rounds and ${sendsText(EXPORT_MAX_SENDS)} sends.
Example: start_export {"type": "campaign_event_data", "campaign_id": "cmp_123", "from": "2026-11-01", "to": "2026-11-30"}`,
  inputSchema,
  outputSchema,
  annotations: {
    title: "Start an export job",
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: true,
  },
  async handler(args, runtime, call) {
    const waitSeconds = checkWaitSeconds(args.wait_seconds) ?? DEFAULT_WAIT_SECONDS;
    const wanted = buildRequest(args, runtime.config.timeZone);
    // Today by the data's clock: error texts propose concrete ranges for an open range.
    const context: ExportContext = {
      ...wanted.context,
      today:
        DateTime.fromMillis(runtime.now(), { zone: runtime.config.timeZone }).toISODate() ??
        undefined,
    };
    const found = await findOrCreateJob(runtime, call, { ...wanted, context }, args.force === true);
    const { reusedCreatedAt, note } = found;
    const followed = await followToResult(runtime, found.job, call, {
      waitSeconds,
      context,
      errorText,
      reused: reusedCreatedAt !== undefined,
    });
    const budget = await runtime.ledger.budgetStatus();
    return {
      structured: {
        summary: followed.summary,
        ...followed.result,
        reused: reusedCreatedAt !== undefined,
        ...(reusedCreatedAt === undefined ? {} : { reused_created_at: reusedCreatedAt }),
        budget: budgetForOutput(budget),
      },
      text: [note, describeJob(followed.result), describeBudget(budget)]
        .filter((l) => l !== "")
        .join("\n"),
      links: followed.links,
    };
  },
});

/** Validates the inputs against spec 4.2 and builds the request, its dedupe key and context. */
function buildRequest(args: z.output<typeof inputSchema>, zone: string): WantedExport {
  const campaignId = blankToUndefined(args.campaign_id);
  const scenarioId = blankToUndefined(args.scenario_id);
  const range = resolveExportRange(
    { from: blankToUndefined(args.from), to: blankToUndefined(args.to) },
    zone,
  );
  const wanted = (request: CreateExportJobRequest, targetId: string): WantedExport => {
    const target = { type: request.type, targetId, fromDate: range.fromDate, toDate: range.toDate };
    return {
      request,
      key: requestKey(target),
      context: target,
      rangeEndsAt: dayEnd(range.toDate, zone),
    };
  };
  if (args.type === "campaign_event_data") {
    if (campaignId === undefined) {
      throw new ToolInputError(
        "campaign_id",
        'campaign_id is required for type "campaign_event_data". Find campaign IDs with campaign_metrics (`campaigns[]._id`), e.g. start_export {"type": "campaign_event_data", "campaign_id": "<_id>"}.',
      );
    }
    if (scenarioId !== undefined) {
      throw new ToolInputError(
        "scenario_id",
        'scenario_id belongs to type "scenario_daily_metrics"; remove it, or set type to "scenario_daily_metrics" and drop campaign_id.',
      );
    }
    const request: CreateExportJobRequest = {
      type: "campaign_event_data",
      campaign_id: campaignId,
    };
    if (range.from !== undefined) request.from = range.from;
    if (range.to !== undefined) request.to = range.to;
    return wanted(request, campaignId);
  }
  if (scenarioId === undefined) {
    throw new ToolInputError(
      "scenario_id",
      'scenario_id is required for type "scenario_daily_metrics" (the scenario\'s ID from the service console).',
    );
  }
  if (campaignId !== undefined) {
    throw new ToolInputError(
      "campaign_id",
      'campaign_id belongs to type "campaign_event_data"; remove it for a scenario export.',
    );
  }
  if (range.from === undefined || range.to === undefined) {
    throw new ToolInputError(
      range.from === undefined ? "from" : "to",
      'from and to are both required for scenario_daily_metrics, e.g. "from": "2026-11-01", "to": "2026-11-30".',
    );
  }
  const request = {
    type: "scenario_daily_metrics",
    scenario_id: scenarioId,
    from: range.from,
    to: range.to,
  } as const;
  return wanted(request, scenarioId);
}

/** Epoch ms of the end of an inclusive `to` date in the app's zone. */
function dayEnd(date: string | undefined, zone: string): number | undefined {
  if (date === undefined) return undefined;
  return DateTime.fromISO(date, { zone }).plus({ days: 1 }).startOf("day").toMillis();
}
