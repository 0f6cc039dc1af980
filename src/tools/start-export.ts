import { z } from "zod";
import { resolveExportRange } from "../api/dates.js";
import { RateLimitedError } from "../api/errors.js";
import type { CreateExportJobRequest, ExportJob } from "../api/schemas.js";
import { ExportBudgetError, ToolInputError } from "./errors.js";
import {
  budgetForOutput,
  budgetOutput,
  checkWaitSeconds,
  describeBudget,
} from "./export-common.js";
import {
  assertNotFailed,
  type DownloadInfo,
  describeJob,
  ensureDownloaded,
  jobResult,
  waitForJob,
} from "./export-flow.js";
import {
  DEFAULT_WAIT_SECONDS,
  dateParam,
  exportJobOutput,
  exportTypeParam,
  resultBase,
  waitSecondsParam,
} from "./params.js";
import { defineTool } from "./tool.js";

const inputSchema = z.object({
  type: exportTypeParam,
  campaign_id: z
    .string()
    .optional()
    .describe("Campaign ID (`_id` from campaign_metrics); required for campaign_event_data."),
  scenario_id: z
    .string()
    .optional()
    .describe("Scenario ID (from the service console); required for scenario_daily_metrics."),
  from: dateParam(
    "First date (inclusive). Optional for campaigns (omitted: no start limit; selects rounds by scheduled send time), required for scenarios",
  ),
  to: dateParam(
    "Last date (inclusive, the whole day). Optional for campaigns (omitted: no end limit), required for scenarios",
  ),
  wait_seconds: waitSecondsParam,
  force: z
    .boolean()
    .optional()
    .describe(
      "true: create a new job even when an identical earlier job's file or URL could be reused (e.g. after a failure, or to get fresh data). Default false.",
    ),
});

const outputSchema = z.object({
  ...resultBase,
  job: exportJobOutput.describe("The export job as the API returns it (signed URL query removed)."),
  done: z.boolean().describe("true when the job is completed or failed."),
  file_path: z.string().optional().describe("Local path of the downloaded file, once completed."),
  file_bytes: z.number().optional(),
  resource_uri: z.string().optional().describe("MCP resource URI of the downloaded file."),
  reused: z
    .boolean()
    .describe("true when an identical earlier job was reused instead of creating one."),
  budget: budgetOutput,
});

export default defineTool({
  name: "start_export",
  title: "Start an export job",
  description: `Create an export job for a campaign's raw events (CSV) or a scenario's daily metrics (XLSX), wait for it and download the file.
Use after campaign_metrics has identified the campaign (or when the user names a scenario), before summarize_export.
Returns the job, and once it is completed the local file_path and a resource link. If the wait runs out first it returns the job status and the exact check_export call to make.
Limits: the service allows 10 job creations per 10 minutes per application (a local budget refuses early and says when the next slot opens); an identical earlier request whose file or URL is still valid is answered from the local ledger without a new job unless force is true. A campaign range may hold at most 120 rounds and 2,000,000 sends (otherwise narrow from/to and split). Files are kept in CRM_DATA_DIR.
Example: start_export {"type": "campaign_event_data", "campaign_id": "cmp_123", "from": "2026-11-01", "to": "2026-11-30", "wait_seconds": 30}`,
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
    const { request, key } = buildRequest(args, runtime.config.timeZone);

    let job: ExportJob | undefined;
    let reused = false;
    let note = "";
    let entry = args.force === true ? undefined : await runtime.ledger.findReusable(key);
    if (entry !== undefined) {
      job = entry.job;
      reused = true;
      note = `Answered from the local ledger: identical job ${entry.job_id} (created ${entry.requested_at}) is completed and its file or URL is still valid. Pass "force": true for a new job.`;
    } else if (args.force !== true) {
      const pending = (await runtime.ledger.list(50)).find(
        (e) => e.request_key === key && (e.status === "triggered" || e.status === "processing"),
      );
      if (pending !== undefined) {
        entry = pending;
        job = pending.job;
        reused = true;
        note = `An identical job ${pending.job_id} (created ${pending.requested_at}) is still running; waiting on it instead of creating another. Pass "force": true for a new job.`;
      }
    }

    if (job === undefined) {
      const budget = await runtime.ledger.budgetStatus();
      if (!budget.allowed && budget.nextSlotAt !== undefined) {
        const at = new Date(budget.nextSlotAt).toISOString();
        const seconds = Math.ceil((budget.nextSlotAt - Date.now()) / 1000);
        throw new ExportBudgetError(
          budget.serverRateLimited
            ? `The service refused more export jobs for now (429). The next creation is possible at ${at} (in ${seconds}s). Meanwhile use check_export to list and reuse existing jobs.`
            : `Local export budget used up: ${budget.used} of ${budget.limit} job creations in the last ${budget.windowSeconds}s (the service allows 10 per 10 minutes). The next creation is possible at ${at} (in ${seconds}s). Meanwhile use check_export to list and reuse existing jobs.`,
          budget.nextSlotAt,
          budget.serverRateLimited,
        );
      }
      const api = await runtime.api();
      await runtime.ledger.recordCreateCall();
      try {
        job = await api.createExportJob(request, { signal: call.signal });
      } catch (error) {
        if (error instanceof RateLimitedError)
          await runtime.ledger.recordRateLimit(error.retryAfterMs);
        throw error;
      }
      runtime.lastPolledAt.set(job._id, Date.now());
      entry = await runtime.ledger.recordCreated(request, key, job);
    }

    let current = job;
    let timedOut = false;
    if (waitSeconds > 0 && current.status !== "completed" && current.status !== "failed") {
      const outcome = await waitForJob(runtime, current, waitSeconds, call);
      current = outcome.job;
      timedOut = outcome.timedOut;
    }
    assertNotFailed(current);
    let download: DownloadInfo | undefined;
    if (current.status === "completed") {
      download = await ensureDownloaded(
        runtime,
        current,
        call,
        await runtime.ledger.get(current._id),
      );
    }
    const result = jobResult(current, download);
    const budget = await runtime.ledger.budgetStatus();
    const summary = download
      ? `Export ${current._id} completed${reused ? " (reused)" : ""}; file at ${download.path}.`
      : `Export ${current._id} is ${current.status}${timedOut ? ` after waiting ${waitSeconds}s` : ""}; call check_export to continue.`;
    const text = [note, describeJob(result), describeBudget(budget)]
      .filter((l) => l !== "")
      .join("\n");
    return {
      structured: { summary, ...result, reused, budget: budgetForOutput(budget) },
      text,
      links: download === undefined ? [] : [download.link],
    };
  },
});

/** Validates the inputs against spec 4.2 and builds the request and its dedupe key. */
function buildRequest(
  args: z.output<typeof inputSchema>,
  zone: string,
): { request: CreateExportJobRequest; key: string } {
  const blank = (v: string | undefined) =>
    v === undefined || v.trim() === "" ? undefined : v.trim();
  const campaignId = blank(args.campaign_id);
  const scenarioId = blank(args.scenario_id);
  const range = resolveExportRange({ from: blank(args.from), to: blank(args.to) }, zone);
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
    return {
      request,
      key: ["campaign_event_data", campaignId, range.fromDate ?? "", range.toDate ?? ""].join("|"),
    };
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
  if (
    range.from === undefined ||
    range.to === undefined ||
    range.fromDate === undefined ||
    range.toDate === undefined
  ) {
    throw new ToolInputError(
      range.from === undefined ? "from" : "to",
      'from and to are both required for scenario_daily_metrics, e.g. "from": "2026-11-01", "to": "2026-11-30".',
    );
  }
  return {
    request: {
      type: "scenario_daily_metrics",
      scenario_id: scenarioId,
      from: range.from,
      to: range.to,
    },
    key: ["scenario_daily_metrics", scenarioId, range.fromDate, range.toDate].join("|"),
  };
}
