import { DateTime } from "luxon";
import { z } from "zod";
import { resolveExportRange } from "../api/dates.js";
import { ApiError, NotFoundError, RateLimitedError } from "../api/errors.js";
import {
  EXPORT_CREATE_LIMIT,
  EXPORT_CREATE_WINDOW_SECONDS,
  EXPORT_MAX_ROUNDS,
  EXPORT_MAX_SENDS,
  sendsText,
} from "../api/limits.js";
import { type CreateExportJobRequest, type ExportJob, isRunning } from "../api/schemas.js";
import { budgetForOutput, describeBudget, windowText } from "../exports/budget-and-range.js";
import { type CreateClaim, claimCreation } from "../exports/create-claim.js";
import { ExportBudgetError, ExportCallError, type ExportContext } from "../exports/errors.js";
import { createCertainlyRefused } from "../exports/export-create-outcome.js";
import { followJob, pendingDownload } from "../exports/export-flow.js";
import { pollOnce } from "../exports/export-polling.js";
import { describeJob, jobResult } from "../exports/export-result.js";
import { exportJobField, exportResultFields } from "../exports/job-result-schema.js";
import { DEFAULT_WAIT_SECONDS } from "../exports/wait-seconds.js";
import { formatByteProgress, formatBytes } from "../format.js";
import type { BudgetStatus } from "../ledger/budget.js";
import type { LedgerEntry } from "../ledger/ledger.js";
import { requestKey } from "../ledger/request-key.js";
import type { GrantedReservation } from "../ledger/store.js";
import { log } from "../log.js";
import { errorText } from "../mcp/error-text.js";
import {
  checkWaitSeconds,
  dateParam,
  exportTypeParam,
  resultBase,
  waitSecondsParam,
} from "../mcp/params.js";
import { defineTool, type ToolCall, type ToolRuntime } from "../mcp/tool.js";
import { ToolInputError } from "../mcp/tool-errors.js";
import { blankToUndefined } from "../text-input.js";

// Strict: a misspelled or unknown argument is refused by name instead of silently dropped.
const inputSchema = z.strictObject({
  type: exportTypeParam,
  campaign_id: z.string().optional().describe("campaign_metrics' `_id`; for campaign_event_data."),
  scenario_id: z.string().optional().describe("For scenario_daily_metrics."),
  from: dateParam("First day, inclusive (campaigns: by scheduled send; required for scenarios)"),
  to: dateParam("Last day, inclusive (required for scenarios)"),
  wait_seconds: waitSecondsParam,
  force: z
    .boolean()
    .optional()
    .describe("true: a new job even where an identical earlier one could be reused."),
});

const outputSchema = z.object({
  ...resultBase,
  ...exportResultFields,
  job: exportJobField,
  done: z.boolean().describe("true when the job is completed or failed."),
  reused: z
    .boolean()
    .describe("true when an identical earlier job was reused instead of creating one."),
  reused_created_at: z
    .string()
    .optional()
    .describe("When the reused job was created: its data is as of then."),
});

export default defineTool({
  name: "start_export",
  title: "Start an export job",
  description: `Create an export job (campaign raw events as CSV, or scenario daily metrics as XLSX), wait up to wait_seconds and download the file. Use after campaign_metrics found the campaign; then summarize_export or query_export.
Returns job and file_path once downloaded, else the exact check_export call to continue.
Limits: ${EXPORT_CREATE_LIMIT} accepted creations per ${EXPORT_CREATE_WINDOW_SECONDS / 60} minutes per application; identical requests reuse the earlier job unless force. A campaign range holds at most ${EXPORT_MAX_ROUNDS} rounds and ${sendsText(EXPORT_MAX_SENDS)} sends.
Example: start_export {"type": "campaign_event_data", "campaign_id": "cmp_123", "from": "2026-11-01", "to": "2026-11-30"}`,
  inputSchema,
  outputSchema,
  annotations: {
    title: "Start an export job",
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: true,
  },
  async handler(args, runtime, call) {
    const waitSeconds = checkWaitSeconds(args.wait_seconds) ?? DEFAULT_WAIT_SECONDS;
    const built = buildRequest(args, runtime.config.timeZone);
    const { request, key, rangeEndsAt } = built;
    // Today by the data's clock: error texts propose concrete ranges for an open range.
    const context: ExportContext = {
      ...built.context,
      today:
        DateTime.fromMillis(runtime.now(), { zone: runtime.config.timeZone }).toISODate() ??
        undefined,
    };
    const force = args.force === true;

    let job: ExportJob | undefined;
    let reusedCreatedAt: string | undefined;
    let note = "";
    // Find-or-create runs one at a time per request in this process: an identical call arriving
    // while a create is in flight waits for it and then finds the job running instead of
    // creating a second one.
    const lookUp = async (): Promise<void> => {
      const reusable = await runtime.ledger.findReusable(key, { rangeEndsAt });
      if (reusable !== undefined) {
        job = reusable.job;
        reusedCreatedAt = reusable.job.created_at ?? reusable.requested_at;
        note = `Answered from the local ledger: identical job ${reusable.job_id} (created ${reusedCreatedAt}) is completed and its file or URL is still valid. Pass "force": true for a new job with fresh data.`;
        return;
      }
      const pending = await runningJob(runtime, key, call);
      if (pending !== undefined) {
        job = pending.job;
        reusedCreatedAt = pending.job.created_at ?? pending.requested_at;
        note = `An identical job ${pending.job_id} (created ${reusedCreatedAt}) is still running; waiting on it instead of creating another. Pass "force": true for a new job.`;
      }
    };
    // A running job can finish between the two looks above (another call polling it records it
    // completed): then it is neither running nor seen finished, so look for a finished one again.
    const lookUpTwice = async (): Promise<void> => {
      await lookUp();
      if (job === undefined) await lookUp();
    };
    const releaseKey = await lockRequestKey(runtime, key);
    let claim: CreateClaim | undefined;
    try {
      if (!force) await lookUpTwice();
      // Another server process on the same ledger may be creating this job right now: the claim
      // lets one create it while the others wait, then find and join it.
      if (job === undefined && !force) {
        claim = await claimCreation(runtime, key, call);
        if (claim.waited) await lookUpTwice();
      }

      if (job === undefined) {
        // Checked and counted in one locked step, so parallel calls cannot overdraw the budget.
        const reservation = await runtime.ledger.reserveCreate();
        if (!reservation.reserved) throw budgetRefusal(reservation.status, runtime.now());
        let sent = false;
        try {
          const api = await runtime.api();
          sent = true;
          job = await api.createExportJob(request, { signal: call.signal });
        } catch (error) {
          // The 429's wait is stored before the slot is given back, so no call takes the slot
          // and runs into the same 429.
          if (error instanceof RateLimitedError)
            await runtime.ledger.recordRateLimit(error.retryAfterMs);
          if (!sent || createCertainlyRefused(error)) await refund(runtime, reservation);
          if (error instanceof ApiError) throw new ExportCallError(error, context);
          throw error;
        }
        runtime.lastPolledAt.set(job._id, Date.now());
        await runtime.ledger.recordCreated(request, key, job, call.principal);
      }
    } finally {
      await claim?.release();
      releaseKey();
    }

    const outcome = await followJob(runtime, job, waitSeconds, call, context);
    const current = outcome.job;
    const result = jobResult(
      current,
      outcome.download,
      runtime.config.timeZone,
      errorText,
      outcome.problem,
      pendingDownload(outcome),
    );
    const budget = await runtime.ledger.budgetStatus();
    const reused = reusedCreatedAt !== undefined;
    const summary = outcome.download
      ? `Export ${current._id} completed${reused ? " (reused)" : ""}; ${formatBytes(outcome.download.bytes)} saved.`
      : outcome.downloading !== undefined
        ? `Export ${current._id} is completed; its file is downloading in the background (${formatByteProgress(outcome.downloading.bytes, outcome.downloading.totalBytes)}); call check_export to finish.`
        : outcome.problem !== undefined
          ? `Export ${current._id} is ${current.status}; a temporary error interrupted it, call check_export to continue.`
          : `Export ${current._id} is ${current.status}${outcome.timedOut ? ` after waiting ${waitSeconds}s` : ""}; call check_export to continue.`;
    const text = [note, describeJob(result), describeBudget(budget)]
      .filter((l) => l !== "")
      .join("\n");
    return {
      structured: {
        summary,
        ...result,
        reused,
        ...(reusedCreatedAt === undefined ? {} : { reused_created_at: reusedCreatedAt }),
        budget: budgetForOutput(budget),
      },
      text,
      links: outcome.download === undefined ? [] : [outcome.download.link],
    };
  },
});

/** Why the budget refused a creation, and when the next one is possible. */
function budgetRefusal(budget: BudgetStatus, now: number): ExportBudgetError {
  const nextSlotAt = budget.nextSlotAt ?? now;
  const at = new Date(nextSlotAt).toISOString();
  const seconds = Math.max(0, Math.ceil((nextSlotAt - now) / 1000));
  return new ExportBudgetError(
    budget.serverRateLimited
      ? `The service refused more export jobs for now (429). The next creation is possible at ${at} (in ${seconds}s). Meanwhile use check_export to list and reuse existing jobs.`
      : `Local export budget used up: ${budget.used} of ${budget.limit} job creations in the last ${windowText(budget.windowSeconds)} (the service allows ${EXPORT_CREATE_LIMIT} per ${EXPORT_CREATE_WINDOW_SECONDS / 60} minutes; only creations it accepted, or whose answer was lost, count). The next creation is possible at ${at} (in ${seconds}s). Meanwhile use check_export to list and reuse existing jobs.`,
    nextSlotAt,
    budget.serverRateLimited,
  );
}

/**
 * Gives a refused creation's slot back. A failure here only leaves the slot counted until it
 * leaves the window, so it is logged rather than hiding the service's answer.
 */
async function refund(runtime: ToolRuntime, reservation: GrantedReservation): Promise<void> {
  try {
    await runtime.ledger.refundCreate(reservation);
  } catch (error) {
    log.warn("export budget: a refused creation's slot could not be given back", {
      error: String(error),
    });
  }
}

/** Per runtime, the tail of each request key's queue of find-or-create steps. */
const keyQueues = new WeakMap<ToolRuntime, Map<string, Promise<void>>>();

/** Waits for the earlier find-or-create steps of the same request key; returns the release. */
async function lockRequestKey(runtime: ToolRuntime, key: string): Promise<() => void> {
  let queues = keyQueues.get(runtime);
  if (queues === undefined) {
    queues = new Map();
    keyQueues.set(runtime, queues);
  }
  const before = queues.get(key) ?? Promise.resolve();
  let release = () => {};
  const mine = new Promise<void>((resolve) => {
    release = resolve;
  });
  const tail = before.then(() => mine);
  queues.set(key, tail);
  void tail.then(() => {
    if (queues.get(key) === tail) queues.delete(key);
  });
  await before;
  return release;
}

/**
 * The ledger's unfinished job for the same request, if the service still has it. The service is
 * asked first: after a restart (or a lost sandbox) the entry may be stale, and reusing it would
 * answer "not found" or "still running" for a job that no longer exists.
 */
async function runningJob(
  runtime: ToolRuntime,
  key: string,
  call: ToolCall,
): Promise<LedgerEntry | undefined> {
  const pending = (await runtime.ledger.list(50)).find(
    (e) => e.request_key === key && e.lost_at === undefined && isRunning(e.status),
  );
  if (pending === undefined) return undefined;
  try {
    const fresh = await pollOnce(runtime, pending.job_id, call);
    if (fresh === undefined) return pending;
    // Finished meanwhile: a completed job is used as is, a failed one needs a new job.
    if (fresh.status === "failed") return undefined;
    return { ...pending, job: fresh, status: fresh.status };
  } catch (error) {
    if (error instanceof NotFoundError) {
      await runtime.ledger.markLost(pending.job_id);
      return undefined;
    }
    // A temporary failure: the job most likely still runs; the wait polls it again.
    if (error instanceof ApiError && error.transient) return pending;
    throw error;
  }
}

/** Validates the inputs against spec 4.2 and builds the request and its dedupe key. */
function buildRequest(
  args: z.output<typeof inputSchema>,
  zone: string,
): { request: CreateExportJobRequest; key: string; context: ExportContext; rangeEndsAt?: number } {
  const campaignId = blankToUndefined(args.campaign_id);
  const scenarioId = blankToUndefined(args.scenario_id);
  const range = resolveExportRange(
    { from: blankToUndefined(args.from), to: blankToUndefined(args.to) },
    zone,
  );
  if (args.type === "campaign_event_data") {
    if (campaignId === undefined) {
      throw new ToolInputError(
        "campaign_id",
        'campaign_id is required for type "campaign_event_data". Find campaign IDs with campaign_metrics (`campaigns[]._id`), e.g. start_export {"type": "campaign_event_data", "campaign_id": "<_id>"}.',
      );
    }
    if (scenarioId !== undefined) {
      throw new ToolInputError(
        "scenario_id",
        'scenario_id belongs to type "scenario_daily_metrics"; remove it, or set type to "scenario_daily_metrics" and drop campaign_id.',
      );
    }
    const request: CreateExportJobRequest = {
      type: "campaign_event_data",
      campaign_id: campaignId,
    };
    if (range.from !== undefined) request.from = range.from;
    if (range.to !== undefined) request.to = range.to;
    return {
      request,
      key: requestKey({
        type: "campaign_event_data",
        targetId: campaignId,
        fromDate: range.fromDate,
        toDate: range.toDate,
      }),
      context: {
        type: "campaign_event_data",
        targetId: campaignId,
        fromDate: range.fromDate,
        toDate: range.toDate,
      },
      rangeEndsAt: dayEnd(range.toDate, zone),
    };
  }
  if (scenarioId === undefined) {
    throw new ToolInputError(
      "scenario_id",
      'scenario_id is required for type "scenario_daily_metrics" (the scenario\'s ID from the service console).',
    );
  }
  if (campaignId !== undefined) {
    throw new ToolInputError(
      "campaign_id",
      'campaign_id belongs to type "campaign_event_data"; remove it for a scenario export.',
    );
  }
  if (
    range.from === undefined ||
    range.to === undefined ||
    range.fromDate === undefined ||
    range.toDate === undefined
  ) {
    throw new ToolInputError(
      range.from === undefined ? "from" : "to",
      'from and to are both required for scenario_daily_metrics, e.g. "from": "2026-11-01", "to": "2026-11-30".',
    );
  }
  return {
    request: {
      type: "scenario_daily_metrics",
      scenario_id: scenarioId,
      from: range.from,
      to: range.to,
    },
    key: requestKey({
      type: "scenario_daily_metrics",
      targetId: scenarioId,
      fromDate: range.fromDate,
      toDate: range.toDate,
    }),
    context: {
      type: "scenario_daily_metrics",
      targetId: scenarioId,
      fromDate: range.fromDate,
      toDate: range.toDate,
    },
    rangeEndsAt: dayEnd(range.toDate, zone),
  };
}

/** Epoch ms of the end of an inclusive `to` date in the app's zone. */
function dayEnd(date: string | undefined, zone: string): number | undefined {
  if (date === undefined) return undefined;
  return DateTime.fromISO(date, { zone }).plus({ days: 1 }).startOf("day").toMillis();
}
