import { realpath, stat } from "node:fs/promises";
import { extname } from "node:path";
import { summarizeCampaignCsv } from "./campaign/summary.js";
import { AnalysisError } from "./errors.js";
import type { SummaryResult } from "./schemas.js";

export { AnalysisError } from "./errors.js";
export { type RenderOptions, renderSummaryMarkdown } from "./render.js";
export * from "./schemas.js";

export interface SummarizeOptions {
  /** Campaign CSVs: the event type that counts as a conversion; inferred when absent. */
  conversionEventType?: string;
  /** The application's time zone, named in the timing figures (the file's times are local). */
  timeZone?: string;
  signal?: AbortSignal;
  /** Largest file accepted, in bytes. Default: 2 GiB for CSV; XLSX: never above 50 MiB. */
  maxBytes?: number;
  /** Campaign CSVs: threads to read with; default: the machine's cores (at most 4) from 64 MiB. */
  threads?: number;
}

const DEFAULT_MAX_CSV_BYTES = 2 * 1024 ** 3;
const DEFAULT_MAX_XLSX_BYTES = 50 * 1024 ** 2;

/**
 * Summarizes a campaign CSV or scenario XLSX export. The path is resolved with realpath before
 * any check, so a link cannot smuggle in another kind of file.
 */
export async function summarizeFile(
  path: string,
  options: SummarizeOptions = {},
): Promise<SummaryResult> {
  let real: string;
  try {
    real = await realpath(path);
  } catch {
    throw new AnalysisError(
      `File not found: ${JSON.stringify(path)}. Pass the path of a downloaded export (.csv or .xlsx), or a job_id from start_export.`,
      "not_found",
    );
  }
  const info = await stat(real);
  if (!info.isFile()) {
    throw new AnalysisError(
      `${JSON.stringify(path)} is not a regular file. Pass the path of a downloaded export (.csv or .xlsx).`,
      "unsupported_file",
    );
  }
  const ext = extname(real).toLowerCase();
  if (ext !== ".csv" && ext !== ".xlsx") {
    throw new AnalysisError(
      `Only .csv (campaign export) and .xlsx (scenario export) files can be summarized; got ${JSON.stringify(extname(real) || "no extension")}.`,
      "unsupported_file",
    );
  }
  // A caller's limit (e.g. the download limit) may lower the XLSX cap but never raise it: the
  // XLSX cap is part of what bounds the memory of reading a workbook.
  const cap =
    ext === ".csv"
      ? (options.maxBytes ?? DEFAULT_MAX_CSV_BYTES)
      : Math.min(options.maxBytes ?? DEFAULT_MAX_XLSX_BYTES, DEFAULT_MAX_XLSX_BYTES);
  if (info.size > cap) {
    throw new AnalysisError(
      `The file is ${info.size} bytes, above the ${cap}-byte limit for ${ext} files. Export a shorter period and summarize the parts.`,
      "too_large",
    );
  }
  if (options.signal?.aborted) throw new AnalysisError("The summary was cancelled.", "aborted");
  if (ext === ".csv") {
    return summarizeCampaignCsv(real, info.size, {
      ...(options.conversionEventType !== undefined
        ? { conversionEventType: options.conversionEventType }
        : {}),
      ...(options.timeZone !== undefined ? { timeZone: options.timeZone } : {}),
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
      ...(options.threads !== undefined ? { threads: options.threads } : {}),
    });
  }
  const { summarizeScenarioXlsx } = await import("./scenario/summary.js");
  return summarizeScenarioXlsx(real, info.size, options.signal);
}
