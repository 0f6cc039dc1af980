import { DateTime } from "luxon";
import { AnalysisError } from "../analysis/errors.js";
import { DateInputError } from "../api/dates.js";
import { ApiError, type DownloadRefusedError, NetworkError } from "../api/errors.js";
import {
  DOWNLOAD_URL_VALIDITY_HOURS,
  EXPORT_CREATE_LIMIT,
  EXPORT_CREATE_WINDOW_SECONDS,
  EXPORT_SIZE_LIMIT_TEXT,
  MAX_METRICS_WINDOW_DAYS,
} from "../api/limits.js";
import { operationLabel } from "../api/to-api-error.js";
import { ToolCancelledError } from "../cancelled.js";
import { CatalogError } from "../catalog.js";
import { clipEchoes } from "../clip.js";
import { ConfigError } from "../config.js";
import {
  DownloadPendingError,
  ExportBudgetError,
  ExportCallError,
  type ExportContext,
  ExportJobFailedError,
  ExportJobLostError,
  ExportNotReadyError,
} from "../exports/errors.js";
import { ExportFileError } from "../files/export-path.js";
import { callHint } from "../format.js";
import { HistoryError } from "../history/errors.js";
import { DatabaseUnavailableError } from "../ledger/postgres-unavailable.js";
import { QueryError } from "../query/errors.js";
import { redact } from "../redact.js";
import { CallDeadlineError, ToolInputError } from "./tool-errors.js";

/**
 * The one place that turns a thrown error into the text of an `isError` result: what happened
 * and the next step. Everything passes through `redact`, so no key or signed URL can leak.
 */
export function errorText(error: unknown, toolName: string): string {
  // Cut before redaction: a key cut in half is still masked (redact masks any 8 of its characters).
  return redact(clipEchoes(`Error in ${toolName}: ${describe(error)}`));
}

function describe(error: unknown): string {
  if (error instanceof ToolInputError || error instanceof DateInputError) {
    return `invalid input (${error.field}). ${error.message} Nothing was sent to the service; correct the input and call again.`;
  }
  if (
    error instanceof CallDeadlineError ||
    error instanceof ExportBudgetError ||
    error instanceof ExportJobFailedError ||
    error instanceof DownloadPendingError ||
    error instanceof ExportJobLostError ||
    error instanceof ExportNotReadyError ||
    error instanceof AnalysisError ||
    error instanceof QueryError ||
    error instanceof ExportFileError ||
    error instanceof DatabaseUnavailableError
  ) {
    return error.message;
  }
  if (error instanceof HistoryError) return historyErrorText(error);
  if (error instanceof ToolCancelledError) return "the call was cancelled.";
  if (error instanceof ExportCallError) return describeApiError(error.apiError, error.context);
  if (error instanceof ApiError) return describeApiError(error);
  if (error instanceof ConfigError || error instanceof CatalogError) return error.message;
  const message = error instanceof Error ? error.message : String(error);
  return `unexpected failure: ${message}. Retry shortly; if it persists, check the server's log (stderr).`;
}

/**
 * A history operation that failed, with the next step of its code. The messages of some codes
 * already end with their own step (they name the file, the line or the lock); the others get
 * theirs here, so each instruction appears once.
 */
function historyErrorText(error: HistoryError): string {
  switch (error.code) {
    case "busy":
    case "corrupt_catalogue":
    case "malformed_file":
    case "not_found":
    case "not_campaign_export":
      return error.message;
    case "not_scenario_export":
      // The workbook reader's refusals say what to check; the path check's does not.
      return error.message.includes("scenario_daily_metrics")
        ? error.message
        : `${clause(error)}. Only a scenario_daily_metrics export (.xlsx) goes there: check that the file is the one its export job downloaded (check_export with the job_id).`;
    case "unknown_job":
      return `${clause(error)}. check_export with the job_id downloads it; the history then adds it on its own.`;
    case "missing_files":
      return `${clause(error)}. Check that CRM_DATA_DIR is the data folder the history was written in; exports added again (start_export with "force": true, or \`crm-insights-mcp sync\`) restore what is missing.`;
    case "cancelled":
      return `${clause(error)}. The export is added at the server's next start, or by \`crm-insights-mcp sync\`.`;
  }
}

const DETAIL_SHOWN = 200;

/** The error's message without its final period, to continue the sentence with the next step. */
function clause(error: Error): string {
  return error.message.replace(/\.$/, "");
}

/**
 * The text of an API failure, written here from what failed (kind, operation, status, code, the
 * export's IDs and dates) rather than by appending advice to the client's message, which already
 * carries its own: each fact and each instruction appears once.
 */
function describeApiError(error: ApiError, context: ExportContext = {}): string {
  const label = operationLabel(error.operation);
  const http =
    error.status === undefined
      ? ""
      : ` (HTTP ${error.status}${error.code === undefined ? "" : `, ${error.code}`})`;
  const job = context.jobId;
  const checkCall =
    job === undefined ? "check_export with the job_id" : callHint("check_export", { job_id: job });
  switch (error.kind) {
    case "authentication":
      return error.operation === "recommend"
        ? `the service rejected the recommend secret key${http}. Check CRM_RECOMMEND_SECRET_KEY (the application's own secret key; it defaults to CRM_SECRET_KEY) and CRM_APPLICATION_ID.`
        : `the service rejected the secret key for ${label.toLowerCase()}${http}. Check CRM_SECRET_KEY (the key issued by the account manager for this application; a key of another application is rejected) and CRM_APPLICATION_ID.`;
    case "not_found":
      return notFoundText(error, context);
    case "cache_not_ready":
      return `the recommendation candidate cache is not ready yet${http}; this is temporary. Retry recommend_products in a minute.`;
    case "engine_error":
      return `the recommendation engine had a temporary error${http} that persisted after retries; retry shortly.`;
    case "limit_exceeded":
      return `the campaign range is too large to export: over ${EXPORT_SIZE_LIMIT_TEXT}${http}. Next: call start_export for shorter from/to ranges and split the period into several jobs${splitSuggestion(context)}; campaign_metrics with include_tasks shows the rounds and sends per period.`;
    case "resource_not_ready":
      return `no round in this range has finished performance aggregation yet${http}. Retry after aggregation finishes (usually within a day of a round's send), or export older rounds${olderRange(context)}.`;
    case "bad_request": {
      const said = serviceDetail(error.detail);
      const rejected = `the service rejected the request as missing or malformed${http}${said === undefined ? "" : `; it said: ${said}`}`;
      if (job !== undefined && error.operation === "get_export_job") {
        return `${rejected}. ${jobKept(job, checkCall)}`;
      }
      return `${rejected}. Check the IDs and dates and call again.`;
    }
    case "rate_limited": {
      const retry = error.retryAfterMs;
      const when =
        retry === undefined
          ? `in up to ${EXPORT_CREATE_WINDOW_SECONDS / 60} minutes`
          : `at ${new Date(Date.now() + retry).toISOString()} (in ${Math.ceil(retry / 1000)}s)`;
      return error.operation === "create_export_job"
        ? `the service refused another export job${http}: it allows ${EXPORT_CREATE_LIMIT} creations per ${EXPORT_CREATE_WINDOW_SECONDS / 60} minutes. The next creation is possible ${when}. Meanwhile check_export lists existing jobs that may be reused.`
        : `${label} was rate limited by the service${http}; retry ${when}.`;
    }
    case "server_error":
      return `${label} failed: the service had an internal error${http} that persisted after retries; retry shortly.`;
    case "network":
    case "timeout": {
      const sent = error instanceof NetworkError ? error.requestSent : true;
      if (error.operation === "create_export_job" && sent) {
        return `${clause(error)} after the create request was sent, so the service may have created the job, but no job ID came back and the local ledger does not know it: calling start_export again creates another job (one more of the ${EXPORT_CREATE_LIMIT} per ${EXPORT_CREATE_WINDOW_SECONDS / 60} minutes). Check the network and CRM_BASE_URL first.`;
      }
      if (job !== undefined) {
        return `${clause(error)}. Export job ${job} itself is fine: ${checkCall} continues (retry shortly).`;
      }
      if (error.kind === "timeout") return `${clause(error)}; retry shortly.`;
      return error.message.includes("TLS")
        ? `${clause(error)}. Check the URL (CRM_BASE_URL / CRM_REALTIME_BASE_URL, or the download host) and, behind a TLS-inspecting proxy, NODE_EXTRA_CA_CERTS.`
        : `${clause(error)}. Check the network and CRM_BASE_URL / CRM_REALTIME_BASE_URL, then retry shortly.`;
    }
    case "aborted":
      return "the call was cancelled.";
    case "invalid_response":
      if (error.operation === "create_export_job") {
        return `${clause(error)}. The service answered the create request, so the job was most likely created, but its ID could not be read and the local ledger does not know it. Do not call start_export again yet: that creates another job (one more of the ${EXPORT_CREATE_LIMIT} per ${EXPORT_CREATE_WINDOW_SECONDS / 60} minutes). Find the job in the service console's export list (or ask the service's operator with the time of this call); check_export without job_id lists the jobs the ledger knows. Report the malformed answer if it persists.`;
      }
      if (job !== undefined) return `${clause(error)}. ${jobKept(job, checkCall)}`;
      return `${clause(error)}. Retry shortly, and report it if it persists.`;
    case "download_refused": {
      const reason = (error as DownloadRefusedError).reason;
      if (reason === "expired") {
        return `the download URL of export job ${job ?? "(this job)"} has expired (URLs are valid ${DOWNLOAD_URL_VALIDITY_HOURS} hours; re-reading the job does not renew them). Create a new job with start_export and "force": true.`;
      }
      // The client's message names the host or size and the setting to change.
      const then =
        job === undefined
          ? ""
          : ` The job itself is fine: after that change, ${checkCall} downloads it.`;
      if (reason === "host_not_allowed") return `${error.message}${then}`;
      if (reason === "too_large")
        return `${clause(error)}: raise CRM_MAX_DOWNLOAD_MB, or export a shorter period.${then}`;
      return `${clause(error)}. Create a new job with start_export and "force": true, and report it if it persists.`;
    }
    case "download_failed":
      return `${clause(error)}. The file was not saved; ${checkCall} retries the download while the URL is valid (${DOWNLOAD_URL_VALIDITY_HOURS} hours).`;
  }
}

/** For a failed read of a job that exists: its ID and how to continue, never a new job. */
function jobKept(job: string, checkCall: string): string {
  return `Export job ${job} exists and is kept in the local ledger (its creation is spent): continue with ${checkCall}; do not create another job.`;
}

function notFoundText(error: ApiError, context: ExportContext): string {
  switch (error.operation) {
    case "recommend":
      return "no active recommendation slot matches this slot_key (inactive or temporarily saved slots do not answer), or CRM_APPLICATION_ID is wrong. Check slot_key in the console.";
    case "get_export_job":
    case "download_export":
      return `export job ${context.jobId ?? ""} was not found on the service (a wrong job_id, another application's job, or a service that lost its jobs). check_export without job_id lists known jobs; create a new job with start_export and "force": true.`;
    case "campaign_metrics":
      return "the application was not found on the service. Check CRM_APPLICATION_ID.";
    case "create_export_job":
      return context.type === "scenario_daily_metrics"
        ? `scenario ${context.targetId ?? ""} was not found in this application. Scenario IDs come from the service console (the scenario's page); check scenario_id and CRM_APPLICATION_ID.`
        : `campaign ${context.targetId ?? ""} was not found in this application. Campaign IDs come from campaign_metrics (campaigns[]._id); check campaign_id and CRM_APPLICATION_ID.`;
  }
}

const DAY_FORMAT = "yyyy-MM-dd";

function exportCall(context: ExportContext, from: DateTime, to: DateTime): string {
  return callHint("start_export", {
    type: "campaign_event_data",
    campaign_id: context.targetId,
    from: from.toFormat(DAY_FORMAT),
    to: to.toFormat(DAY_FORMAT),
  });
}

function day(date: string | undefined): DateTime | undefined {
  if (date === undefined) return undefined;
  const parsed = DateTime.fromISO(date, { zone: "utc" });
  return parsed.isValid ? parsed : undefined;
}

/**
 * Concrete smaller ranges, so the model can split without date arithmetic: two halves of a
 * known range (an open end taken as today), or for a range without a start the last 30 days and
 * the 30 before them.
 */
function splitSuggestion(context: ExportContext): string {
  const to = day(context.toDate) ?? day(context.today);
  const from = day(context.fromDate);
  if (to === undefined) return " (give both from and to)";
  if (from === undefined) {
    const recent = to.minus({ days: 29 });
    const before = recent.minus({ days: 1 });
    return `, e.g. the last 30 days ${exportCall(context, recent, to)} and the 30 before ${exportCall(context, before.minus({ days: 29 }), before)} (split again if one still fails)`;
  }
  const days = Math.round(to.diff(from, "days").days);
  if (days < 1) return " (one day cannot be split further)";
  const firstEnd = from.plus({ days: Math.floor(days / 2) });
  return `, e.g. ${exportCall(context, from, firstEnd)} and ${exportCall(context, firstEnd.plus({ days: 1 }), to)} (split again if one still fails)`;
}

/**
 * For ResourceNotReady: a range of the same length ending on the campaign's last round that
 * should have finished aggregation (looked up by the export flow, ready-round.ts), as an exact
 * call, and the metrics call that shows which of the campaign's rounds exist.
 */
function olderRange(context: ExportContext): string {
  if (context.type !== "campaign_event_data" || context.targetId === undefined) return "";
  const to = day(context.toDate) ?? day(context.today);
  const from = day(context.fromDate);
  const ready = context.lastReadyRound === null ? undefined : day(context.lastReadyRound);
  let older = "";
  if (ready !== undefined) {
    const length =
      from !== undefined && to !== undefined
        ? Math.max(0, Math.round(to.diff(from, "days").days))
        : 0;
    older = `, e.g. ${exportCall(context, ready.minus({ days: length }), ready)} (its last round that should have finished aggregating was sent on ${ready.toFormat(DAY_FORMAT)})`;
  } else if (context.lastReadyRound === null) {
    older = ` once one has finished: none of this campaign's rounds in the ${MAX_METRICS_WINDOW_DAYS} days up to ${(to ?? from)?.toFormat(DAY_FORMAT) ?? "today"} is expected to be aggregated yet`;
  }
  const start = from ?? to;
  const rounds = callHint("campaign_metrics", {
    campaign_ids: [context.targetId],
    include_tasks: true,
    ...(start === undefined ? {} : { task_from: start.minus({ days: 90 }).toFormat(DAY_FORMAT) }),
    ...(to === undefined ? {} : { task_to: to.toFormat(DAY_FORMAT) }),
  });
  return `${older}; ${rounds} lists its rounds and when they were sent`;
}

/** The service's own words on a 400, redacted and shortened: they often say what to change. */
function serviceDetail(detail: string | undefined): string | undefined {
  if (detail === undefined) return undefined;
  let text = detail;
  try {
    const json: unknown = JSON.parse(detail);
    if (typeof json === "object" && json !== null) {
      const record = json as Record<string, unknown>;
      const message = [record.message, record.error_description, record.detail, record.error].find(
        (v): v is string => typeof v === "string" && v.trim() !== "",
      );
      if (message !== undefined) text = message;
    }
  } catch {
    // Not JSON: the text itself.
  }
  const flat = redact(text).replace(/\s+/g, " ").trim();
  if (flat === "") return undefined;
  return `"${flat.length > DETAIL_SHOWN ? `${flat.slice(0, DETAIL_SHOWN)}…` : flat}"`;
}
