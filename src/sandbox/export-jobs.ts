import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { SandboxClock } from "./clock.js";
import type { CsvShape } from "./csv-shape.js";
import { exportRange } from "./dates.js";
import type { UrlSigner } from "./download-urls.js";
import { type ReadDates, readDates, selectRounds } from "./export-request.js";
import { errorReply, type JsonReply } from "./http-util.js";
import { createProduction } from "./job-production.js";
import { type JobRecord, type JobRecords, memoryJobRecords } from "./job-records.js";
import { createSlidingWindowLimiter } from "./rate-limit.js";
import {
  CREATE_LIMIT,
  CREATE_WINDOW_SECONDS,
  EXPORT_TYPES,
  type ExportStatus,
  type ExportType,
  MAX_ROUNDS_PER_EXPORT,
  MAX_SENDS_PER_EXPORT,
} from "./spec.js";
import { isoUtc } from "./world/time.js";
import type { World } from "./world/types.js";

export { type Selection, selectRounds } from "./export-request.js";

/** A read that finds the job's time is up waits this long for its file before saying `processing`. */
const FILE_WAIT_ON_READ_MS = 5_000;

export interface ExportJobsOptions {
  world: World;
  clock: SandboxClock;
  jobSeconds: number;
  fileDir: string;
  signer: UrlSigner;
  /** The application zone's fixed UTC offset, for the CSV's times. */
  offsetMinutes: number;
  /** Row order and ID spellings of campaign CSVs (csv-shape.ts); default the sandbox's own. */
  csvShape?: CsvShape;
  /**
   * Where the jobs are remembered: default this process's memory; a folder (job-records.ts)
   * keeps them across restarts and shares them with other processes on the same folder.
   */
  records?: JobRecords;
}

export interface DownloadableFile {
  path: string;
  size: number;
  fileName: string;
  ext: "csv" | "xlsx";
}

export function createExportJobs(options: ExportJobsOptions) {
  const { world, clock, signer } = options;
  const paceMs = Math.max(0, options.jobSeconds) * 1000;
  const records = options.records ?? memoryJobRecords();
  // Per process, as a front end of the service counts: not shared through the records.
  const limiter = createSlidingWindowLimiter(CREATE_LIMIT, CREATE_WINDOW_SECONDS * 1000);
  const production = createProduction({
    world,
    clock,
    fileDir: options.fileDir,
    records,
    offsetMinutes: options.offsetMinutes,
    csvShape: options.csvShape,
  });
  const filePath = (record: JobRecord, ext: "csv" | "xlsx") =>
    join(options.fileDir, `${record.id}.${ext}`);

  async function createCampaignJob(body: Record<string, unknown>): Promise<JsonReply> {
    const campaignId = body.campaign_id;
    if (typeof campaignId !== "string" || campaignId === "") {
      return errorReply(400, "campaign_id is required (a string) for campaign_event_data");
    }
    const dates = readDates(body, false, world.timeZone);
    if ("error" in dates) return dates.error;
    const campaign = world.campaign(campaignId);
    if (campaign === undefined) {
      return errorReply(400, `Campaign ${campaignId} not found`, "ResourceNotFound");
    }
    const { fromMs, toMs } = exportRange(dates.from, dates.to);
    const selection = selectRounds(campaign, fromMs, toMs);
    if (selection.sends > MAX_SENDS_PER_EXPORT || selection.rounds.length > MAX_ROUNDS_PER_EXPORT) {
      return errorReply(
        400,
        `The range holds ${selection.sends} sends in ${selection.rounds.length} rounds; at most ${MAX_SENDS_PER_EXPORT} sends and ${MAX_ROUNDS_PER_EXPORT} rounds per job. Narrow the period and split into several jobs.`,
        "LimitExceeded",
      );
    }
    if (selection.rounds.length === 0) {
      return errorReply(
        400,
        "No round in the range has finished its performance aggregation; retry after aggregation.",
        "ResourceNotReady",
      );
    }
    const limited = acquire();
    if (limited !== undefined) return limited;
    const job = newJob("campaign_event_data", body, dates);
    job.campaignId = campaignId;
    job.designedToFail = campaign.role === "failing_export";
    return accept(job);
  }

  async function createScenarioJob(body: Record<string, unknown>): Promise<JsonReply> {
    const scenarioId = body.scenario_id;
    if (typeof scenarioId !== "string" || scenarioId === "") {
      return errorReply(400, "scenario_id is required (a string) for scenario_daily_metrics");
    }
    const dates = readDates(body, true, world.timeZone);
    if ("error" in dates) return dates.error;
    const scenario = world.scenario(scenarioId);
    if (scenario === undefined) {
      return errorReply(400, `Scenario ${scenarioId} not found`, "ResourceNotFound");
    }
    const limited = acquire();
    if (limited !== undefined) return limited;
    const job = newJob("scenario_daily_metrics", body, dates);
    job.scenarioId = scenarioId;
    return accept(job);
  }

  /** Records the new job and starts its file; the reply is made before any row is read. */
  async function accept(job: JobRecord): Promise<JsonReply> {
    if (!job.designedToFail) job.producer = production.newProducer();
    await records.put(job);
    if (job.producer !== undefined) production.start(job);
    await removeExpiredFiles(clock.now());
    return { status: 200, body: view(job, job.createdAt, true) };
  }

  function acquire(): JsonReply | undefined {
    const decision = limiter.tryAcquire(clock.now());
    if (decision.ok) return undefined;
    return errorReply(
      429,
      `Export job creation is limited to ${CREATE_LIMIT} per ${CREATE_WINDOW_SECONDS / 60} minutes; retry after ${decision.retryAfterSeconds} seconds.`,
      undefined,
      { "Retry-After": String(decision.retryAfterSeconds) },
    );
  }

  /** Files behind expired URLs can never be downloaded again; a long-running sandbox drops them. */
  async function removeExpiredFiles(now: number): Promise<void> {
    for (const job of await records.all()) {
      const expires = job.urlExpiresAtMs;
      if (expires === undefined || job.meta === undefined || job.fileRemoved === true) continue;
      if (now < expires) continue;
      const ext = job.meta.ext;
      await records.update(job.id, (r) => {
        if (r.fileRemoved === true) return false;
        r.fileRemoved = true;
        return true;
      });
      await rm(filePath(job, ext), { force: true });
    }
  }

  function newJob(type: ExportType, body: Record<string, unknown>, dates: ReadDates): JobRecord {
    const job: JobRecord = {
      id: randomBytes(12).toString("hex"),
      type,
      createdAt: clock.now(),
      designedToFail: false,
      productionFailed: false,
    };
    // Spec 2.3: every date-time of the response is ISO 8601 in UTC, so the requested moments are
    // returned as UTC instants (a date-only value is 00:00 of that date in the app zone).
    if (dates.from !== undefined) {
      job.from = isoUtc(dates.from.at.toMillis());
      job.requestFrom = String(body.from);
    }
    if (dates.to !== undefined) {
      job.to = isoUtc(dates.to.at.toMillis());
      job.requestTo = String(body.to);
    }
    return job;
  }

  /**
   * Status by elapsed time: first half triggered, second half processing, then the outcome. A
   * job stamped after our "now" was made by a sandbox whose clock runs ahead of ours (another
   * process, or one restarted at the same pinned time): its pacing is judged over.
   */
  function statusAt(job: JobRecord, now: number): { status: ExportStatus; since: number } {
    const elapsed = now >= job.createdAt ? now - job.createdAt : Number.POSITIVE_INFINITY;
    if (paceMs > 0 && elapsed < paceMs / 2) return { status: "triggered", since: job.createdAt };
    const processingSince = job.createdAt + paceMs / 2;
    if (elapsed < paceMs) return { status: "processing", since: processingSince };
    const dueAt = job.createdAt + paceMs;
    if (job.designedToFail || job.productionFailed) return { status: "failed", since: dueAt };
    if (job.meta === undefined) return { status: "processing", since: processingSince };
    return { status: "completed", since: Math.max(dueAt, job.completedAt ?? dueAt) };
  }

  function view(job: JobRecord, now: number, justCreated = false): Record<string, unknown> {
    // Spec 4.2: create answers `triggered` whatever the pacing.
    const { status, since } = justCreated
      ? { status: "triggered" as const, since: job.createdAt }
      : statusAt(job, now);
    const out: Record<string, unknown> = {
      _id: job.id,
      application_id: world.applicationId,
      type: job.type,
      status,
    };
    if (job.campaignId !== undefined) out.campaign_id = job.campaignId;
    if (job.scenarioId !== undefined) out.scenario_id = job.scenarioId;
    if (job.from !== undefined) out.from = job.from;
    if (job.to !== undefined) out.to = job.to;
    if (status === "completed" && job.meta !== undefined && job.urlExpiresAtMs !== undefined) {
      out.file_name = job.meta.name;
      out.file_ext = job.meta.ext;
      out.file_size = job.meta.size;
      out.download_url = signer.urlFor(job.id, job.urlExpiresAtMs);
      out.download_url_expires_at = isoUtc(job.urlExpiresAtMs);
    }
    out.created_at = isoUtc(job.createdAt);
    out.updated_at = isoUtc(since);
    return out;
  }

  /**
   * The URL's expiry is fixed when a reader first sees the job completed; later reads, in any
   * process, repeat it (each with its own URL for that expiry).
   */
  async function withUrlExpiry(job: JobRecord, now: number): Promise<JobRecord> {
    if (job.urlExpiresAtMs !== undefined || statusAt(job, now).status !== "completed") return job;
    const { expiresAtMs } = signer.create(job.id, now);
    const updated = await records.update(job.id, (r) => {
      if (r.urlExpiresAtMs !== undefined) return false;
      r.urlExpiresAtMs = expiresAtMs;
      return true;
    });
    return updated ?? job;
  }

  return {
    create(body: Record<string, unknown>): Promise<JsonReply> {
      const type = body.type;
      if (typeof type !== "string" || !(EXPORT_TYPES as readonly string[]).includes(type)) {
        return Promise.resolve(errorReply(400, `type must be one of ${EXPORT_TYPES.join(", ")}`));
      }
      return type === "campaign_event_data" ? createCampaignJob(body) : createScenarioJob(body);
    },

    async get(jobId: string): Promise<JsonReply> {
      const found = await records.get(jobId);
      if (found === undefined) {
        return errorReply(400, `Export job ${jobId} not found`, "ResourceNotFound");
      }
      let job = await production.resume(found);
      if (clock.now() - job.createdAt >= paceMs && job.meta === undefined) {
        // With short pacing (0 in tests) the file may still be being written: wait a little.
        job = await production.waitForFile(job, FILE_WAIT_ON_READ_MS);
      }
      const now = clock.now();
      return { status: 200, body: view(await withUrlExpiry(job, now), now) };
    },

    /** The completed file of a job, for the download route. */
    async file(jobId: string): Promise<DownloadableFile | undefined> {
      const job = await records.get(jobId);
      if (job?.meta === undefined || job.fileRemoved === true) return undefined;
      return {
        path: filePath(job, job.meta.ext),
        size: job.meta.size,
        fileName: job.meta.name,
        ext: job.meta.ext,
      };
    },

    /** Stops writers and waits for them to let go of their files. */
    close(): Promise<void> {
      return production.close();
    },
  };
}

export type ExportJobs = ReturnType<typeof createExportJobs>;
