import type { ApiError } from "../api/errors.js";

/**
 * The errors of the export flow: a refused creation, a failed, lost or unfinished job, a file
 * still downloading, and an API failure with what the flow knew. Their messages are written for
 * the model (what happened and what to do); mcp/error-text.ts turns them into the result's text.
 */

/** The local mirror of the service's creation limit (ledger/budget.ts) refused a new export job. */
export class ExportBudgetError extends Error {
  override name = "ExportBudgetError";
  readonly nextSlotAt: number;
  readonly serverRateLimited: boolean;
  constructor(message: string, nextSlotAt: number, serverRateLimited: boolean) {
    super(message);
    this.nextSlotAt = nextSlotAt;
    this.serverRateLimited = serverRateLimited;
  }
}

/** The export job ended `failed`; spec 3.1 says a new job must be created. */
export class ExportJobFailedError extends Error {
  override name = "ExportJobFailedError";
  readonly jobId: string;
  constructor(jobId: string, message: string) {
    super(message);
    this.jobId = jobId;
  }
}

/**
 * The job is completed but its file is still downloading in the background: nothing failed, the
 * message says how far it got and how to wait for the rest.
 */
export class DownloadPendingError extends Error {
  override name = "DownloadPendingError";
  readonly jobId: string;
  constructor(jobId: string, message: string) {
    super(message);
    this.jobId = jobId;
  }
}

/**
 * The service no longer knows a job the ledger has (e.g. a restarted sandbox). Every later call
 * about it says so at once, with the exact call that creates it again.
 */
export class ExportJobLostError extends Error {
  override name = "ExportJobLostError";
  readonly jobId: string;
  constructor(jobId: string, message: string) {
    super(message);
    this.jobId = jobId;
  }
}

/** A job exists but has no file yet: nothing is wrong with the input, the job needs time. */
export class ExportNotReadyError extends Error {
  override name = "ExportNotReadyError";
  readonly jobId: string;
  constructor(jobId: string, message: string) {
    super(message);
    this.jobId = jobId;
  }
}

/** What the export tools knew when an API call failed, so the error text can be specific. */
export interface ExportContext {
  /** Set once the job exists: the text must then name it and say how to continue. */
  jobId?: string | undefined;
  type?: "campaign_event_data" | "scenario_daily_metrics" | undefined;
  /** The campaign or scenario ID requested. */
  targetId?: string | undefined;
  /** Inclusive dates in the app's zone, when given. */
  fromDate?: string | undefined;
  toDate?: string | undefined;
  /** Today's date in the app's zone by the data's clock, for ranges proposed on an open range. */
  today?: string | undefined;
  /**
   * After a ResourceNotReady: the date of the campaign's last round up to the range's end that
   * should have finished aggregation (ready-round.ts); null when none did, absent when unknown.
   */
  lastReadyRound?: string | null | undefined;
}

/** An API failure inside start_export or check_export, with what the tool knew at the time. */
export class ExportCallError extends Error {
  override name = "ExportCallError";
  readonly apiError: ApiError;
  readonly context: ExportContext;
  constructor(apiError: ApiError, context: ExportContext) {
    super(apiError.message, { cause: apiError });
    this.apiError = apiError;
    this.context = context;
  }
}
