import { basename } from "node:path";
import { z } from "zod";
import { wallClockMinute, zoneLabel } from "../api/dates.js";
import { MIN_POLL_INTERVAL_SECONDS } from "../api/limits.js";
import { isRunning, targetIdOf } from "../api/schemas.js";
import { budgetForOutput, describeBudget, describeRange } from "../exports/budget-and-range.js";
import { currentJob, entryDates } from "../exports/export-current-job.js";
import { followToResult } from "../exports/export-flow.js";
import { describeJob } from "../exports/export-result.js";
import { exportJobField, exportResultFields } from "../exports/job-result-schema.js";
import { DEFAULT_WAIT_SECONDS } from "../exports/wait-seconds.js";
import {
  describeCalls,
  formatBytes,
  moreNotShown,
  type NextCall,
  nextCall,
  table,
} from "../format.js";
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
});

export default defineTool({
  name: "check_export",
  title: "Check an export job",
  description: `Wait for an export job and download its file; without job_id, list recent jobs from the local ledger. Use when start_export returned before the job finished (it gives the exact call).
Returns job and file_path once downloaded, else the call to continue (next_step). A failed job or expired URL: start_export again with force.
Limits: polled at most every ${MIN_POLL_INTERVAL_SECONDS} s; wait_seconds up to 50 per call.
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
      const limit = args.limit ?? LIST_DEFAULT;
      const { entries, total, budget } = await runtime.ledger.recent(limit);
      const jobs = entries.map((e) => ({
        job_id: e.job_id,
        type: e.request.type,
        target_id: targetIdOf(e.request),
        from: e.request.from,
        to: e.request.to,
        from_date: entryDates(e).fromDate,
        to_date: entryDates(e).toDate,
        // Lost: the service no longer knows the job (e.g. a restarted sandbox).
        status: e.lost_at === undefined ? e.status : "lost",
        requested_at: e.requested_at,
        file_path: e.file_removed_at === undefined ? e.file_path : undefined,
        file_removed_at: e.file_removed_at,
      }));
      const listNext = listNextCall(jobs);
      const warnings = runtime.ledger.takeWarnings().join("\n");
      const rows = jobs.map((j) => [
        j.job_id,
        j.type === "campaign_event_data" ? "campaign" : "scenario",
        j.target_id ?? "",
        describeRange(j.from_date, j.to_date),
        j.status,
        wallClockMinute(j.requested_at, runtime.config.timeZone),
        // The name tells the files apart; full paths are in structuredContent.jobs.
        j.file_path !== undefined
          ? basename(j.file_path)
          : j.file_removed_at !== undefined
            ? "(removed: retention)"
            : "",
      ]);
      const folder = describeDataFolder(runtime.dataFolder, runtime.config.retention);
      const text =
        jobs.length === 0
          ? `No export jobs in the local ledger yet. Create one with start_export.\n${folder}`
          : [
              `${total} export job(s) in the local ledger; newest ${jobs.length}:`,
              table(
                [
                  "job_id",
                  "type",
                  "id",
                  "range",
                  "status",
                  `requested (${zoneLabel(runtime.config.timeZone)})`,
                  "file",
                ],
                rows,
              ),
              jobs.some((j) => j.file_path !== undefined)
                ? "Full file paths: structuredContent.jobs[].file_path."
                : "",
              moreNotShown(total, jobs.length, `raise limit, max ${LIST_MAX}`),
              describeBudget(budget),
              folder,
            ]
              .filter((l) => l !== "")
              .join("\n");
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
    return {
      structured: { summary: followed.summary, ...followed.result, budget },
      text: describeJob(followed.result),
      links: followed.links,
    };
  },
});

/** Where the files are and how long they stay, so a user can find (and expect to lose) them. */
function describeDataFolder(
  folder: string,
  retention: { maxAgeDays: number; maxBytes: number },
): string {
  const limits = [
    retention.maxAgeDays > 0 ? `${retention.maxAgeDays} days` : undefined,
    retention.maxBytes > 0 ? `${formatBytes(retention.maxBytes)} in all` : undefined,
  ].filter((l) => l !== undefined);
  const kept =
    limits.length === 0
      ? "kept until removed by hand"
      : `kept for ${limits.join(", at most ")} (CRM_RETENTION_DAYS, CRM_RETENTION_MB)`;
  return `Data folder: ${folder}; downloaded files ${kept}.`;
}

/** The most useful follow-up for a listing: finish a running job, else analyse the newest file. */
function listNextCall(
  jobs: Array<{ job_id: string; status: string; file_path?: string | undefined }>,
): NextCall {
  const running = jobs.find((j) => isRunning(j.status));
  if (running !== undefined)
    return nextCall("check_export", { job_id: running.job_id, wait_seconds: 30 });
  const withFile = jobs.find((j) => j.file_path !== undefined);
  if (withFile !== undefined) return nextCall("summarize_export", { job_id: withFile.job_id });
  // Nothing to continue or analyse: find a campaign first (its _id feeds start_export).
  return nextCall("campaign_metrics", {});
}
