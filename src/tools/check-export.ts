import { z } from "zod";
import { MIN_POLL_INTERVAL_SECONDS } from "../api/limits.js";
import { budgetForOutput } from "../exports/budget-and-range.js";
import { currentJob } from "../exports/export-current-job.js";
import { followToResult } from "../exports/export-flow.js";
import { describeJob } from "../exports/export-result.js";
import { describeJobList, listNextCall, toListedJob } from "../exports/job-list.js";
import { exportJobField, exportResultFields } from "../exports/job-result-schema.js";
import { DEFAULT_WAIT_SECONDS, MAX_WAIT_SECONDS } from "../exports/wait-seconds.js";
import { describeCalls } from "../format.js";
import { errorText } from "../mcp/error-text.js";
import {
  checkInteger,
  checkWaitSeconds,
  jobIdParam,
  resultBase,
  waitSecondsParam,
} from "../mcp/params.js";
import { defineTool } from "../mcp/tool.js";

const LIST_DEFAULT = 10;
const LIST_MAX = 50;

// Strict: a misspelled or unknown argument is refused by name instead of silently dropped.
const inputSchema = z.strictObject({
  job_id: jobIdParam("Omit to list recent jobs."),
  wait_seconds: waitSecondsParam,
  limit: z
    .number()
    .meta({ minimum: 1, maximum: LIST_MAX })
    .optional()
    .describe(`Listing: 1 to ${LIST_MAX} jobs (default ${LIST_DEFAULT}).`),
});

const listedJob = z.object({
  job_id: z.string(),
  type: z.string(),
  target_id: z.string().optional(),
  from: z.string().optional().describe("The request's start instant (ISO 8601)."),
  to: z.string().optional().describe("The request's end instant (ISO 8601, exclusive)."),
  from_date: z.string().optional().describe("First date exported (inclusive, app's zone)."),
  to_date: z.string().optional().describe("Last date exported (inclusive, app's zone)."),
  status: z.string(),
  requested_at: z.string(),
  file_path: z.string().optional(),
  file_removed_at: z
    .string()
    .optional()
    .describe("When the retention limits removed the downloaded file (export again to get it)."),
});

const outputSchema = z.object({
  ...resultBase,
  ...exportResultFields,
  job: exportJobField.optional(),
  done: z.boolean().optional(),
  jobs: z
    .array(listedJob)
    .optional()
    .describe("Recent jobs from the local ledger, newest first (listing mode)."),
  total_jobs: z.number().optional(),
  data_dir: z
    .string()
    .optional()
    .describe("Listing mode: the data folder holding the ledger and the downloaded files."),
  history: z
    .object({
      status: z.enum(["kept", "adding", "failed", "waiting"]),
      error: z.string().optional(),
    })
    .optional()
    .describe("The file in the history (query_export history: true)."),
});

export default defineTool({
  name: "check_export",
  title: "Check an export job",
  description: `Wait for an export job and download its file; without job_id, list recent jobs from the local ledger. Use when start_export returned before the job finished (it gives the exact call).
Returns job and file_path once downloaded, else the call to continue (next_step). A failed job or expired URL: start_export again with force.
Limits: polled at most every ${MIN_POLL_INTERVAL_SECONDS} s; wait_seconds up to ${MAX_WAIT_SECONDS} per call.
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
    const jobId = args.job_id?.trim();
    if (jobId === undefined || jobId === "") {
      checkInteger(args.limit, "limit", 1, LIST_MAX);
      const { entries, total, budget } = await runtime.ledger.recent(args.limit ?? LIST_DEFAULT);
      const jobs = entries.map(toListedJob);
      const listNext = listNextCall(jobs);
      const warnings = runtime.ledger.takeWarnings().join("\n");
      const text = describeJobList(jobs, total, budget, {
        zone: runtime.config.timeZone,
        dataFolder: runtime.dataFolder,
        retention: runtime.config.retention,
        showMore: `raise limit, max ${LIST_MAX}`,
      });
      return {
        structured: {
          summary: `${total} export job(s) in the local ledger; ${jobs.length} listed.`,
          next_step: describeCalls([listNext]),
          next_calls: [listNext],
          jobs,
          total_jobs: total,
          data_dir: runtime.dataFolder,
          budget: budgetForOutput(budget),
        },
        text: warnings === "" ? text : `${warnings}\n${text}`,
      };
    }

    const budget = budgetForOutput(await runtime.ledger.budgetStatus());
    const entry = await runtime.ledger.get(jobId);
    const { job, context, pollProblem } = await currentJob(runtime, jobId, entry, call, {
      waitSeconds,
    });
    const followed = await followToResult(runtime, job, call, {
      waitSeconds,
      context,
      errorText,
      pollProblem,
    });
    const history =
      followed.result.file_path === undefined ? undefined : await runtime.history.status(jobId);
    const text = describeJob(followed.result);
    return {
      structured: {
        summary: followed.summary,
        ...followed.result,
        budget,
        ...(history === undefined ? {} : { history }),
      },
      text:
        history?.status === "failed"
          ? `${text}\nNot added to the history of exports: ${history.error}`
          : text,
      links: followed.links,
    };
  },
});
