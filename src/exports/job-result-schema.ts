import { z } from "zod";
import { EXPORT_CREATE_LIMIT, EXPORT_CREATE_WINDOW_SECONDS } from "../api/limits.js";

/** The output schema of a job result (export-result.ts), shared by start_export and check_export. */

/** The job in start_export and check_export results (spec 2.3), download URL signature removed. */
export const exportJobField = z
  .looseObject({
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
  })
  .describe("The export job as the API returns it (signed URL query removed).");

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

/** The output fields of a job result (JobResult). */
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
