import { z } from "zod";
import { NotFoundError } from "../api/errors.js";
import type { ExportJob } from "../api/schemas.js";
import { ToolInputError } from "./errors.js";
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
  isTerminal,
  jobResult,
  pollOnce,
  waitForJob,
} from "./export-flow.js";
import { table, truncate } from "./format.js";
import {
  checkInteger,
  DEFAULT_WAIT_SECONDS,
  exportJobOutput,
  resultBase,
  waitSecondsParam,
} from "./params.js";
import { defineTool } from "./tool.js";

const LIST_DEFAULT = 10;
const LIST_MAX = 50;

const inputSchema = z.object({
  job_id: z
    .string()
    .optional()
    .describe(
      "Export job ID returned by start_export (`job._id`). Omit to list recent jobs from the local ledger.",
    ),
  wait_seconds: waitSecondsParam,
  limit: z
    .number()
    .meta({ minimum: 1, maximum: LIST_MAX })
    .optional()
    .describe(
      `When listing (no job_id): how many recent jobs, 1 to ${LIST_MAX} (default ${LIST_DEFAULT}).`,
    ),
});

const listedJob = z.object({
  job_id: z.string(),
  type: z.string(),
  target_id: z.string().optional(),
  from: z.string().optional(),
  to: z.string().optional(),
  status: z.string(),
  requested_at: z.string(),
  file_path: z.string().optional(),
});

const outputSchema = z.object({
  ...resultBase,
  job: exportJobOutput
    .optional()
    .describe("The export job as the API returns it (signed URL query removed)."),
  done: z.boolean().optional(),
  file_path: z.string().optional().describe("Local path of the downloaded file, once completed."),
  file_bytes: z.number().optional(),
  resource_uri: z.string().optional(),
  jobs: z
    .array(listedJob)
    .optional()
    .describe("Recent jobs from the local ledger, newest first (listing mode)."),
  total_jobs: z.number().optional(),
  budget: budgetOutput,
});

export default defineTool({
  name: "check_export",
  title: "Check an export job",
  description: `Check (and wait for) an export job created by start_export; when it is completed, download its file. Without job_id, list recent export jobs from the local ledger.
Use when start_export returned before the job finished (it gives the exact check_export call), or to find earlier exports and their files.
Returns the job and, once completed, the local file_path and a resource link; a failed job or an expired download URL is an error telling you to create a new job with start_export and "force": true.
Limits: jobs are polled at most every ${5} seconds (service rule); wait_seconds up to 50 per call, so call again for longer jobs. Generation usually takes tens of seconds to several minutes.
Example: check_export {"job_id": "exp_abc123", "wait_seconds": 30}`,
  inputSchema,
  outputSchema,
  annotations: {
    title: "Check an export job",
    readOnlyHint: true,
    openWorldHint: true,
  },
  async handler(args, runtime, call) {
    const waitSeconds = checkWaitSeconds(args.wait_seconds) ?? DEFAULT_WAIT_SECONDS;
    const budget = budgetForOutput(await runtime.ledger.budgetStatus());
    const jobId = args.job_id?.trim();
    if (jobId === undefined || jobId === "") {
      const problem = checkInteger(args.limit, "limit", 1, LIST_MAX);
      if (problem !== undefined) throw new ToolInputError("limit", problem);
      const limit = args.limit ?? LIST_DEFAULT;
      const entries = await runtime.ledger.list(limit);
      const total = await runtime.ledger.count();
      const jobs = entries.map((e) => ({
        job_id: e.job_id,
        type: e.request.type,
        target_id:
          e.request.type === "campaign_event_data" ? e.request.campaign_id : e.request.scenario_id,
        from: e.request.from,
        to: e.request.to,
        status: e.status,
        requested_at: e.requested_at,
        file_path: e.file_path,
      }));
      const warnings = runtime.ledger.warnings.join("\n");
      const rows = jobs.map((j) => [
        j.job_id,
        j.type === "campaign_event_data" ? "campaign" : "scenario",
        j.target_id ?? "",
        `${(j.from ?? "").slice(0, 10)}..${(j.to ?? "").slice(0, 10)}`,
        j.status,
        j.requested_at.slice(0, 16).replace("T", " "),
        j.file_path === undefined ? "" : truncate(j.file_path, 60),
      ]);
      const text =
        jobs.length === 0
          ? "No export jobs in the local ledger yet. Create one with start_export."
          : [
              `${total} export job(s) in the local ledger; newest ${jobs.length}:`,
              table(["job_id", "type", "id", "range", "status", "requested (UTC)", "file"], rows),
              total > jobs.length
                ? `${total - jobs.length} more not shown (raise limit, max ${LIST_MAX}).`
                : "",
              describeBudget(await runtime.ledger.budgetStatus()),
            ]
              .filter((l) => l !== "")
              .join("\n");
      return {
        structured: {
          summary: `${total} export job(s) in the local ledger; ${jobs.length} listed.`,
          jobs,
          total_jobs: total,
          budget,
        },
        text: warnings === "" ? text : `${warnings}\n${text}`,
      };
    }

    const entry = await runtime.ledger.get(jobId);
    let job: ExportJob | undefined;
    try {
      job = await pollOnce(runtime, jobId, call);
    } catch (error) {
      if (error instanceof NotFoundError) {
        throw new NotFoundError(
          `Export job ${jobId} was not found on the service. Check the job_id (check_export without job_id lists known jobs) or create a new job with start_export.`,
          { operation: "get_export_job", status: error.status, code: error.code },
        );
      }
      throw error;
    }
    // Polled too recently: start from what the ledger knows and let the wait poll on schedule.
    job ??= entry?.job;
    if (job === undefined) {
      const api = await runtime.api();
      job = await api.getExportJob(jobId, { signal: call.signal });
    }
    if (!isTerminal(job.status) && waitSeconds > 0) {
      job = (await waitForJob(runtime, job, waitSeconds, call)).job;
    }
    assertNotFailed(job);
    let download: DownloadInfo | undefined;
    if (job.status === "completed") {
      download = await ensureDownloaded(runtime, job, call, await runtime.ledger.get(jobId));
    }
    const result = jobResult(job, download);
    const summary = download
      ? `Export ${job._id} completed; file at ${download.path}.`
      : `Export ${job._id} is ${job.status}; call check_export again.`;
    return {
      structured: { summary, ...result, budget },
      text: describeJob(result),
      links: download === undefined ? [] : [download.link],
    };
  },
});
