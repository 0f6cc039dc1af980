import { basename } from "node:path";
import { wallClockMinute, zoneLabel } from "../api/dates.js";
import { isRunning, targetIdOf } from "../api/schemas.js";
import { formatBytes, moreNotShown, type NextCall, nextCall, table } from "../format.js";
import type { BudgetStatus } from "../ledger/budget.js";
import type { LedgerEntry } from "../ledger/store.js";
import { describeBudget, describeRange } from "./budget-and-range.js";
import { entryDates } from "./export-current-job.js";

/** check_export without job_id: the recent jobs of the local ledger, as data and as a table. */

/** One job of the listing (check_export's `jobs[]`). */
export interface ListedJob {
  job_id: string;
  type: string;
  target_id?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
  from_date?: string | undefined;
  to_date?: string | undefined;
  status: string;
  requested_at: string;
  file_path?: string | undefined;
  file_removed_at?: string | undefined;
}

export function toListedJob(e: LedgerEntry): ListedJob {
  return {
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
  };
}

/** The listing's text: a table of the jobs, what was left out, the budget and the data folder. */
export function describeJobList(
  jobs: readonly ListedJob[],
  total: number,
  budget: BudgetStatus,
  where: {
    zone: string;
    dataFolder: string;
    retention: { maxAgeDays: number; maxBytes: number };
    /** How to see the jobs left out, e.g. "raise limit, max 50". */
    showMore: string;
  },
): string {
  const folder = describeDataFolder(where.dataFolder, where.retention);
  if (jobs.length === 0) {
    return `No export jobs in the local ledger yet. Create one with start_export.\n${folder}`;
  }
  const rows = jobs.map((j) => [
    j.job_id,
    j.type === "campaign_event_data" ? "campaign" : "scenario",
    j.target_id ?? "",
    describeRange(j.from_date, j.to_date),
    j.status,
    wallClockMinute(j.requested_at, where.zone),
    // The name tells the files apart; full paths are in structuredContent.jobs.
    j.file_path !== undefined
      ? basename(j.file_path)
      : j.file_removed_at !== undefined
        ? "(removed: retention)"
        : "",
  ]);
  return [
    `${total} export job(s) in the local ledger; newest ${jobs.length}:`,
    table(
      ["job_id", "type", "id", "range", "status", `requested (${zoneLabel(where.zone)})`, "file"],
      rows,
    ),
    jobs.some((j) => j.file_path !== undefined)
      ? "Full file paths: structuredContent.jobs[].file_path."
      : "",
    moreNotShown(total, jobs.length, where.showMore),
    describeBudget(budget),
    folder,
  ]
    .filter((l) => l !== "")
    .join("\n");
}

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
export function listNextCall(jobs: readonly ListedJob[]): NextCall {
  const running = jobs.find((j) => isRunning(j.status));
  if (running !== undefined)
    return nextCall("check_export", { job_id: running.job_id, wait_seconds: 30 });
  const withFile = jobs.find((j) => j.file_path !== undefined);
  if (withFile !== undefined) return nextCall("summarize_export", { job_id: withFile.job_id });
  // Nothing to continue or analyse: find a campaign first (its _id feeds start_export).
  return nextCall("campaign_metrics", {});
}
