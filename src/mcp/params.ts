import { z } from "zod";
import { EXPORT_CREATE_LIMIT, EXPORT_CREATE_WINDOW_SECONDS } from "../api/limits.js";
import { EXPORT_TYPES } from "../api/schemas.js";
import { ToolInputError } from "./tool-errors.js";

/**
 * Parameter schemas shared by the tools. Ranges are advertised in the JSON Schema (`meta`) but
 * checked in the handlers, so that a wrong value gets our message naming the fix rather than the
 * SDK's generic "Input validation error".
 */

export const MAX_WAIT_SECONDS = 50;
export const DEFAULT_WAIT_SECONDS = 20;

/** The job_id input of check_export and summarize_export; `use` says what it does there. */
export const jobIdParam = (use: string) =>
  z.string().optional().describe(`\`job._id\` from start_export or check_export's list. ${use}`);

export const waitSecondsParam = z
  .number()
  .meta({ minimum: 0, maximum: MAX_WAIT_SECONDS })
  .optional()
  .describe(
    `0 to ${MAX_WAIT_SECONDS} seconds (default ${DEFAULT_WAIT_SECONDS}); the job goes on after.`,
  );

export const exportTypeParam = z
  .enum(EXPORT_TYPES)
  .describe(
    "campaign_event_data: a campaign's raw events (CSV); scenario_daily_metrics: daily node metrics (XLSX).",
  );

export const dateParam = (what: string) =>
  z.string().optional().describe(`${what}: YYYY-MM-DD, in the application's time zone.`);

/** Fields every tool result carries, so structuredContent explains itself without the text. */
export const resultBase = {
  summary: z.string(),
  data_source: z.enum(["sandbox", "service"]).describe("sandbox: synthetic data"),
  next_step: z.string().optional().describe("the exact follow-up call"),
  next_calls: z
    .array(z.object({ tool: z.string(), arguments: z.record(z.string(), z.unknown()) }))
    .optional()
    .describe("next_step as data: [{tool, arguments}] in order"),
};

/** The export job as the API returns it (spec 2.3), download URL signature removed. */
export const exportJobOutput = z.looseObject({
  _id: z.string(),
  type: z.string(),
  status: z.string(),
  campaign_id: z.string().optional(),
  scenario_id: z.string().optional(),
  from: z.string().optional(),
  to: z.string().optional(),
  file_name: z.string().optional(),
  file_ext: z.string().optional(),
  file_size: z.number().optional(),
  download_url: z.string().optional(),
  download_url_expires_at: z.string().optional(),
  created_at: z.string().optional(),
  updated_at: z.string().optional(),
});

/** Throws a ToolInputError naming the field unless `value` is absent or an integer in [min, max]. */
export function checkInteger(
  value: number | undefined,
  field: string,
  min: number,
  max: number | undefined,
): void {
  if (value === undefined) return;
  const range = max === undefined ? `${min} or more` : `${min} to ${max}`;
  if (!Number.isInteger(value) || value < min || (max !== undefined && value > max)) {
    throw new ToolInputError(field, `${field} must be a whole number ${range}; got ${value}.`);
  }
}

/** wait_seconds, or a ToolInputError that says how to wait longer. */
export function checkWaitSeconds(value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isFinite(value) || value < 0 || value > MAX_WAIT_SECONDS) {
    throw new ToolInputError(
      "wait_seconds",
      `wait_seconds must be between 0 and ${MAX_WAIT_SECONDS}; got ${value}. For longer jobs call check_export again with the job_id.`,
    );
  }
  return value;
}

export const budgetOutput = z
  .object({
    used: z.number(),
    limit: z.number(),
    window_seconds: z.number(),
    next_slot_at: z.string().optional(),
  })
  .describe(
    `Local budget of accepted export creations (the service's ${EXPORT_CREATE_LIMIT} per ${EXPORT_CREATE_WINDOW_SECONDS / 60} minutes).`,
  );

/** The job in start_export and check_export results. */
export const exportJobField = exportJobOutput.describe(
  "The export job as the API returns it (signed URL query removed).",
);

/** The output fields of a job result (export-result's JobResult) shared by start_export and check_export. */
export const exportResultFields = {
  status: z
    .string()
    .optional()
    .describe(
      'The job\'s status, or "downloading": the job is completed and its file is still downloading in the background (call check_export as next_step says).',
    ),
  download_progress: z
    .object({ bytes: z.number(), total_bytes: z.number().optional() })
    .optional()
    .describe("While downloading: bytes received so far and the file's size."),
  earlier_download_error: z
    .string()
    .optional()
    .describe("A background download that had failed after an earlier call; this call retried it."),
  file_path: z.string().optional().describe("Local path of the downloaded file, once completed."),
  file_bytes: z.number().optional(),
  resource_uri: z.string().optional().describe("MCP resource URI of the downloaded file."),
  from_date: z
    .string()
    .optional()
    .describe("First exported date, inclusive, in the app's time zone (absent: no start limit)."),
  to_date: z
    .string()
    .optional()
    .describe("Last exported date, inclusive, in the app's time zone (absent: no end limit)."),
  error: z
    .string()
    .optional()
    .describe("A temporary failure after the job was created; the job is intact, see next_step."),
  budget: budgetOutput,
};
