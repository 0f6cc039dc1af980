import { z } from "zod";
import { EXPORT_TYPES } from "../api/schemas.js";

/**
 * Parameter schemas shared by the tools. Ranges are advertised in the JSON Schema (`meta`) but
 * checked in the handlers, so that a wrong value gets our message naming the fix rather than the
 * SDK's generic "Input validation error".
 */

export const MAX_WAIT_SECONDS = 50;
export const DEFAULT_WAIT_SECONDS = 20;

export const jobIdParam = z
  .string()
  .describe("Export job ID (`job._id`) returned by start_export, or listed by check_export.");

export const waitSecondsParam = z
  .number()
  .meta({ minimum: 0, maximum: MAX_WAIT_SECONDS })
  .optional()
  .describe(
    `Seconds to wait for the job to finish before returning, 0 to ${MAX_WAIT_SECONDS} (default ${DEFAULT_WAIT_SECONDS}; 0 returns at once). The job keeps running after the call returns; follow up with check_export.`,
  );

export const exportTypeParam = z
  .enum(EXPORT_TYPES)
  .describe(
    "`campaign_event_data`: per-user raw events of one campaign as CSV (needs campaign_id). `scenario_daily_metrics`: daily per-node metrics of one scenario as XLSX (needs scenario_id, from and to).",
  );

export const dateParam = (what: string) =>
  z
    .string()
    .optional()
    .describe(
      `${what}: YYYY-MM-DD (e.g. 2026-11-01) or ISO 8601 date-time; read as a calendar date in the application's time zone (CRM_TIME_ZONE).`,
    );

/** Fields every tool result carries, so structuredContent explains itself without the text. */
export const resultBase = {
  summary: z.string().describe("One-line summary of the result."),
  data_source: z
    .enum(["sandbox", "service"])
    .describe("`sandbox`: synthetic data from the embedded sandbox, not a real service."),
  next_step: z
    .string()
    .optional()
    .describe("The exact follow-up call to make, when one is needed."),
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

/** Integer in [min, max] or a ToolInputError-worthy message. */
export function checkInteger(
  value: number | undefined,
  field: string,
  min: number,
  max: number | undefined,
): string | undefined {
  if (value === undefined) return undefined;
  const range = max === undefined ? `${min} or more` : `${min} to ${max}`;
  if (!Number.isInteger(value) || value < min || (max !== undefined && value > max)) {
    return `${field} must be a whole number ${range}; got ${value}.`;
  }
  return undefined;
}
