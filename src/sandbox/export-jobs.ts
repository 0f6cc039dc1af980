import { randomBytes } from "node:crypto";
import { rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  EXPORT_CREATE_LIMIT,
  EXPORT_CREATE_WINDOW_SECONDS,
  EXPORT_MAX_ROUNDS,
  EXPORT_MAX_SENDS,
} from "../api/limits.js";
import { EXPORT_TYPES, type ExportStatus, type ExportType } from "../api/schemas.js";
import { log } from "../log.js";
import type { SandboxClock } from "./clock.js";
import type { CsvShape } from "./csv-shape.js";
import { type SelectedRound, writeCampaignCsv } from "./csv-writer.js";
import { appDate, exportRange, type ParsedMoment, parseMoment } from "./dates.js";
import type { UrlSigner } from "./download-urls.js";
import { errorReply, type JsonReply } from "./http-util.js";
import { createSlidingWindowLimiter } from "./rate-limit.js";
import { isoUtc } from "./world/time.js";
import type { SandboxCampaign, World } from "./world/types.js";
import { writeScenarioXlsx } from "./xlsx-writer.js";

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
}

interface ProducedFile {
  path: string;
  name: string;
  ext: "csv" | "xlsx";
  size: number;
  doneAt: number;
}

interface JobRecord {
  id: string;
  type: ExportType;
  campaignId?: string;
  scenarioId?: string;
  from?: string;
  to?: string;
  createdAt: number;
  /** The `failing_export` campaign: the job ends `failed` when its time is up. */
  designedToFail: boolean;
  production?: Promise<void>;
  file?: ProducedFile;
  productionFailed: boolean;
  /** Its URL expired and the file was deleted; the job still reads `completed`. */
  fileRemoved?: boolean;
  completedAt?: number;
  /** The file fields, kept after the file itself is removed. */
  meta?: { name: string; ext: "csv" | "xlsx"; size: number };
  url?: { url: string; expiresAtMs: number };
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
  const jobs = new Map<string, JobRecord>();
  const limiter = createSlidingWindowLimiter(
    EXPORT_CREATE_LIMIT,
    EXPORT_CREATE_WINDOW_SECONDS * 1000,
  );
  const stop = new AbortController();
  const inFlight = new Set<Promise<void>>();

  function produce(
    job: JobRecord,
    work: (path: string) => Promise<void>,
    name: string,
    ext: "csv" | "xlsx",
  ) {
    const path = join(options.fileDir, `${job.id}.${ext}`);
    const started = Date.now();
    const production = work(path)
      .then(async () => {
        const { size } = await stat(path);
        job.file = { path, name, ext, size, doneAt: clock.now() };
        job.completedAt = job.file.doneAt;
        job.meta = { name, ext, size };
        log.debug("sandbox export file ready", {
          job: job.id,
          bytes: size,
          ms: Date.now() - started,
        });
      })
      .catch((error: unknown) => {
        job.productionFailed = true;
        if (!stop.signal.aborted) {
          log.warn("sandbox export file failed", { job: job.id, error: String(error) });
        }
      });
    job.production = production;
    inFlight.add(production);
    void production.finally(() => inFlight.delete(production));
  }

  function createCampaignJob(body: Record<string, unknown>): JsonReply {
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
    if (selection.sends > EXPORT_MAX_SENDS || selection.rounds.length > EXPORT_MAX_ROUNDS) {
      return errorReply(
        400,
        `The range holds ${selection.sends} sends in ${selection.rounds.length} rounds; at most ${EXPORT_MAX_SENDS} sends and ${EXPORT_MAX_ROUNDS} rounds per job. Narrow the period and split into several jobs.`,
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
    const job = newJob("campaign_event_data", dates);
    job.campaignId = campaignId;
    job.designedToFail = campaign.role === "failing_export";
    if (!job.designedToFail) {
      produce(
        job,
        async (path) => {
          await writeCampaignCsv(
            world,
            selection.rounds,
            path,
            options.offsetMinutes,
            stop.signal,
            options.csvShape,
          );
        },
        `campaign_event_data_${campaignId}_${job.id}`,
        "csv",
      );
    }
    return { status: 200, body: view(job, job.createdAt, true) };
  }

  function createScenarioJob(body: Record<string, unknown>): JsonReply {
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
    const job = newJob("scenario_daily_metrics", dates);
    job.scenarioId = scenarioId;
    const fromDate = dates.from === undefined ? "" : appDate(dates.from);
    const toDate = dates.to === undefined ? "" : appDate(dates.to);
    produce(
      job,
      async (path) => {
        const reports = world.scenarioReport(scenario, fromDate, toDate);
        await writeScenarioXlsx(reports, path, { fromDate, toDate });
      },
      `scenario_daily_metrics_${scenarioId}_${job.id}`,
      "xlsx",
    );
    return { status: 200, body: view(job, job.createdAt, true) };
  }

  function acquire(): JsonReply | undefined {
    const decision = limiter.tryAcquire(clock.now());
    if (decision.ok) return undefined;
    return errorReply(
      429,
      `Export job creation is limited to ${EXPORT_CREATE_LIMIT} per ${EXPORT_CREATE_WINDOW_SECONDS / 60} minutes; retry after ${decision.retryAfterSeconds} seconds.`,
      undefined,
      { "Retry-After": String(decision.retryAfterSeconds) },
    );
  }

  /** Files behind expired URLs can never be downloaded again; a long-running sandbox drops them. */
  function removeExpiredFiles(now: number): void {
    for (const job of jobs.values()) {
      if (job.url !== undefined && job.file !== undefined && now >= job.url.expiresAtMs) {
        void rm(job.file.path, { force: true });
        job.file = undefined;
        job.fileRemoved = true;
      }
    }
  }

  function newJob(type: ExportType, dates: ReadDates): JobRecord {
    removeExpiredFiles(clock.now());
    const job: JobRecord = {
      id: randomBytes(12).toString("hex"),
      type,
      createdAt: clock.now(),
      designedToFail: false,
      productionFailed: false,
    };
    // Spec 2.3: every date-time of the response is ISO 8601 in UTC, so the requested moments are
    // returned as UTC instants (a date-only value is 00:00 of that date in the app zone).
    if (dates.from !== undefined) job.from = isoUtc(dates.from.at.toMillis());
    if (dates.to !== undefined) job.to = isoUtc(dates.to.at.toMillis());
    jobs.set(job.id, job);
    return job;
  }

  /** Status by elapsed time: first half triggered, second half processing, then the outcome. */
  function statusAt(job: JobRecord, now: number): { status: ExportStatus; since: number } {
    const elapsed = now - job.createdAt;
    if (paceMs > 0 && elapsed < paceMs / 2) return { status: "triggered", since: job.createdAt };
    const processingSince = job.createdAt + paceMs / 2;
    if (elapsed < paceMs) return { status: "processing", since: processingSince };
    const dueAt = job.createdAt + paceMs;
    if (job.designedToFail || job.productionFailed) return { status: "failed", since: dueAt };
    if (job.file === undefined && job.fileRemoved !== true) {
      return { status: "processing", since: processingSince };
    }
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
    if (status === "completed" && job.meta !== undefined) {
      // The URL is made when a reader first sees the job completed; later reads repeat it.
      job.url ??= signer.create(job.id, now);
      out.file_name = job.meta.name;
      out.file_ext = job.meta.ext;
      out.file_size = job.meta.size;
      out.download_url = job.url.url;
      out.download_url_expires_at = isoUtc(job.url.expiresAtMs);
    }
    out.created_at = isoUtc(job.createdAt);
    out.updated_at = isoUtc(since);
    return out;
  }

  return {
    create(body: Record<string, unknown>): JsonReply {
      const type = body.type;
      if (typeof type !== "string" || !(EXPORT_TYPES as readonly string[]).includes(type)) {
        return errorReply(400, `type must be one of ${EXPORT_TYPES.join(", ")}`);
      }
      return type === "campaign_event_data" ? createCampaignJob(body) : createScenarioJob(body);
    },

    async get(jobId: string): Promise<JsonReply> {
      const job = jobs.get(jobId);
      if (job === undefined) {
        return errorReply(400, `Export job ${jobId} not found`, "ResourceNotFound");
      }
      const now = clock.now();
      if (now - job.createdAt >= paceMs && job.file === undefined && job.production !== undefined) {
        // With short pacing (0 in tests) the file may still be being written: wait a little.
        await waitAtMost(job.production, FILE_WAIT_ON_READ_MS, stop.signal);
      }
      return { status: 200, body: view(job, clock.now()) };
    },

    /** The completed file of a job, for the download route. */
    file(jobId: string): DownloadableFile | undefined {
      const file = jobs.get(jobId)?.file;
      if (file === undefined) return undefined;
      return { path: file.path, size: file.size, fileName: file.name, ext: file.ext };
    },

    /** Stops writers and waits for them to let go of their files. */
    async close(): Promise<void> {
      stop.abort();
      await Promise.allSettled([...inFlight]);
    },
  };
}

export type ExportJobs = ReturnType<typeof createExportJobs>;

interface ReadDates {
  from?: ParsedMoment;
  to?: ParsedMoment;
}

function readDates(
  body: Record<string, unknown>,
  required: boolean,
  timeZone: string,
): ReadDates | { error: JsonReply } {
  const out: ReadDates = {};
  for (const key of ["from", "to"] as const) {
    const value = body[key];
    if (value === undefined || value === null) {
      if (required) return { error: errorReply(400, `${key} is required (ISO 8601 date)`) };
      continue;
    }
    if (typeof value !== "string") {
      return { error: errorReply(400, `${key} must be an ISO 8601 string`) };
    }
    const parsed = parseMoment(value, timeZone);
    if (parsed === undefined) {
      return {
        error: errorReply(400, `${key} is not a valid ISO 8601 date or date-time: ${value}`),
      };
    }
    out[key] = parsed;
  }
  if (out.from !== undefined && out.to !== undefined && appDate(out.from) > appDate(out.to)) {
    return { error: errorReply(400, "from must not be after to") };
  }
  return out;
}

export interface Selection {
  rounds: SelectedRound[];
  /** Send records of the send groups (a control group sends nothing). */
  sends: number;
}

/**
 * Spec 4.2 rules 2 and 4: rounds by scheduled send time, aggregated ones only. For the limits of
 * spec 8 every (task, group) is a round, the control group included: spec 2.4 identifies a round
 * by `task_id`, `scheduled_at` and `group`, and control rows carry `group` = 대조군. A control
 * group adds a round but no sends.
 */
export function selectRounds(campaign: SandboxCampaign, fromMs: number, toMs: number): Selection {
  const selection: Selection = { rounds: [], sends: 0 };
  for (const task of campaign.tasks) {
    if (task.scheduled_at < fromMs || task.scheduled_at >= toMs || !task.aggregated) continue;
    for (const round of task.rounds) {
      selection.rounds.push({ task, round });
      if (!round.isControl) selection.sends += round.records;
    }
  }
  return selection;
}

async function waitAtMost(work: Promise<void>, ms: number, stopSignal: AbortSignal): Promise<void> {
  const timer = new AbortController();
  const sleeping = sleep(ms, undefined, { signal: AbortSignal.any([timer.signal, stopSignal]) });
  try {
    await Promise.race([work, sleeping.catch(() => undefined)]);
  } finally {
    timer.abort();
  }
}
