import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import { z } from "zod";
import { EXPORT_TYPES } from "../api/schemas.js";
import { DEFAULT_WAIT_SECONDS, MAX_WAIT_SECONDS } from "../exports/wait-seconds.js";
import { ToolInputError } from "./tool-errors.js";

/**
 * Parameter schemas shared by the tools. Ranges are advertised in the JSON Schema (`meta`) but
 * checked in the handlers, so that a wrong value gets our message naming the fix rather than the
 * SDK's generic "Input validation error".
 */

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

/**
 * The server's working folder is not the user's (a client starts it anywhere), so a relative
 * path would silently name another file: only absolute paths, with a leading ~ expanded.
 */
export function absoluteFile(file: string, field = "file"): string {
  const expanded = file === "~" || file.startsWith("~/") ? join(homedir(), file.slice(1)) : file;
  if (!isAbsolute(expanded)) {
    throw new ToolInputError(
      field,
      `${field} must be an absolute path (e.g. /Users/me/exports/campaign.csv or ~/exports/campaign.csv); "${file}" is relative, and the server's working folder is not yours. For a file this server downloaded, pass job_id instead.`,
    );
  }
  return expanded;
}
