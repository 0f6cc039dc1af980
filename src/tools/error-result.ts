import { AnalysisError } from "../analysis/errors.js";
import { DateInputError } from "../api/dates.js";
import {
  ApiError,
  type DownloadRefusedError,
  type NetworkError,
  type RateLimitedError,
} from "../api/errors.js";
import { redact } from "../redact.js";
import {
  ExportBudgetError,
  ExportJobFailedError,
  ToolCancelledError,
  ToolInputError,
} from "./errors.js";

/**
 * The one place that turns a thrown error into the text of an `isError` result: what happened
 * and the next step. Everything passes through `redact`, so no key or signed URL can leak.
 */
export function errorText(error: unknown, toolName: string): string {
  return redact(`Error in ${toolName}: ${describe(error)}`);
}

function describe(error: unknown): string {
  if (error instanceof ToolInputError || error instanceof DateInputError) {
    return `invalid input (${error.field}). ${error.message} Nothing was sent to the service; correct the input and call again.`;
  }
  if (
    error instanceof ExportBudgetError ||
    error instanceof ExportJobFailedError ||
    error instanceof AnalysisError
  ) {
    return error.message;
  }
  if (error instanceof ToolCancelledError) return "the call was cancelled.";
  if (error instanceof ApiError) return describeApiError(error);
  if (error instanceof Error && (error.name === "ConfigError" || error.name === "CatalogError")) {
    return error.message;
  }
  const message = error instanceof Error ? error.message : String(error);
  return `unexpected failure: ${message}. Retry shortly; if it persists, check the server's log (stderr).`;
}

function describeApiError(error: ApiError): string {
  const base = error.message.replace(/\.?$/, ".");
  switch (error.kind) {
    case "authentication":
      return error.operation === "recommend"
        ? `${base} Authentication failed for recommend: check CRM_RECOMMEND_SECRET_KEY (the application's own secret key; it defaults to CRM_SECRET_KEY) and CRM_APPLICATION_ID.`
        : `${base} Authentication failed for exports/metrics: check CRM_SECRET_KEY (the key issued by the account manager for this application; a key of another application is rejected) and CRM_APPLICATION_ID.`;
    case "not_found":
      return error.operation === "recommend"
        ? `${base} No active recommendation slot matches this slot_key (inactive or temporarily saved slots do not answer), or CRM_APPLICATION_ID is wrong. Check slot_key in the console.`
        : `${base} Check the ID: campaign IDs come from campaign_metrics (campaigns[]._id), job IDs from start_export or check_export without job_id; also check CRM_APPLICATION_ID.`;
    case "cache_not_ready":
      return `${base} The recommendation candidate cache is not ready yet (temporary); retry recommend_products in a minute.`;
    case "engine_error":
      return `${base} The recommendation engine had a temporary error that persisted after retries; retry shortly.`;
    case "limit_exceeded":
      return `${base} Next: call start_export for shorter from/to ranges (e.g. one week or month each); campaign_metrics with include_tasks shows the rounds and sends per period.`;
    case "resource_not_ready":
      return `${base} No round in this range has finished performance aggregation yet. Retry after aggregation finishes, or choose a range with older rounds.`;
    case "bad_request":
      return `${base} The service rejected the request as malformed; check the IDs and dates and call again.`;
    case "rate_limited": {
      const retry = (error as RateLimitedError).retryAfterMs;
      const when =
        retry === undefined
          ? "in up to 10 minutes"
          : `at ${new Date(Date.now() + retry).toISOString()} (in ${Math.ceil(retry / 1000)}s)`;
      return `${base} The service allows 10 export creations per 10 minutes; the next creation is possible ${when}. Meanwhile check_export lists existing jobs that may be reused.`;
    }
    case "server_error":
      return `${base} The service had an internal error that persisted after retries; retry shortly.`;
    case "network":
      return error.operation === "create_export_job" && (error as NetworkError).requestSent
        ? `${base} The connection broke after the request was sent, so the job may exist on the service; check the network and CRM_BASE_URL, then call start_export again (an identical finished job is reused).`
        : `${base} Could not reach the service: check the network and CRM_BASE_URL / CRM_REALTIME_BASE_URL, then retry shortly.`;
    case "timeout":
      return `${base} The service did not answer in time; retry shortly.`;
    case "aborted":
      return "the call was cancelled.";
    case "invalid_response":
      return `${base} The service's answer did not match the documented format; retry shortly, and report it if it persists.`;
    case "download_refused": {
      const reason = (error as DownloadRefusedError).reason;
      if (reason === "expired") {
        return `${base} The download URL has expired (valid 24 hours; re-reading a job does not renew it). Create a new job with start_export and "force": true.`;
      }
      if (reason === "host_not_allowed") {
        return `${base} The download host is not allowed: add it to CRM_DOWNLOAD_HOSTS if it is the service's file host.`;
      }
      if (reason === "too_large")
        return `${base} Raise CRM_MAX_DOWNLOAD_MB or export a shorter period.`;
      return `${base} The download URL was refused for safety; create a new job with start_export and "force": true, and report it if it persists.`;
    }
    case "download_failed":
      return `${base} The download did not complete; call check_export with this job_id again to retry the download while the URL is valid.`;
  }
}
