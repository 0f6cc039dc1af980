import { randomBytes } from "node:crypto";
import { rename, rm, stat } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ownedTempPath, sweepOrphanTempFiles } from "../file-io/orphan-files.js";
import { processAlive } from "../file-io/process-alive.js";
import { log } from "../log.js";
import type { SandboxClock } from "./clock.js";
import type { CsvShape } from "./csv-shape.js";
import { writeCampaignCsv } from "./csv-writer.js";
import { appDate, exportRange } from "./dates.js";
import { readDates, selectRounds, waitAtMost } from "./export-request.js";
import type { JobRecord, JobRecords } from "./job-records.js";
import type { World } from "./world/types.js";
import { writeScenarioXlsx } from "./xlsx-writer.js";

export interface ProductionOptions {
  world: World;
  clock: SandboxClock;
  fileDir: string;
  records: JobRecords;
  /** The application zone's fixed UTC offset, for the CSV's times. */
  offsetMinutes: number;
  csvShape?: CsvShape | undefined;
}

/** The file a job's record asks for: its name and how to write it. */
interface Plan {
  name: string;
  ext: "csv" | "xlsx";
  write(path: string, signal: AbortSignal): Promise<void>;
}

/** How often a reader looks again at a job whose file another process is writing. */
const OTHER_WRITER_POLL_MS = 50;

/** Producer tokens of the writers running in this process (any sandbox instance in it). */
const runningTokens = new Set<string>();

/**
 * Writes export files in the background. A file is written beside its final path and renamed
 * when whole, so no process ever serves half a file. The record names its producer (PID, host,
 * token); a process that stopped mid-file (closed, killed) leaves the job to the next reader on
 * the same host, which writes the file again from the record, as a service would resume its
 * queue after a restart.
 */
export function createProduction(options: ProductionOptions) {
  const { world, clock, records } = options;
  const stop = new AbortController();
  const running = new Map<string, Promise<void>>();
  const host = hostname();
  // Temporary files of writers that were killed; best effort, in the background.
  void sweepOrphanTempFiles([options.fileDir]);

  function plan(record: JobRecord): Plan | undefined {
    const dates = readDates(
      { from: record.requestFrom, to: record.requestTo },
      record.type === "scenario_daily_metrics",
      world.timeZone,
    );
    if ("error" in dates) return undefined;
    if (record.type === "campaign_event_data") {
      const campaign = world.campaign(record.campaignId ?? "");
      if (campaign === undefined) return undefined;
      const { fromMs, toMs } = exportRange(dates.from, dates.to);
      const { rounds } = selectRounds(campaign, fromMs, toMs);
      return {
        name: `campaign_event_data_${campaign._id}_${record.id}`,
        ext: "csv",
        write: async (path, signal) => {
          await writeCampaignCsv(
            world,
            rounds,
            path,
            options.offsetMinutes,
            signal,
            options.csvShape,
          );
        },
      };
    }
    const scenario = world.scenario(record.scenarioId ?? "");
    if (scenario === undefined) return undefined;
    const fromDate = dates.from === undefined ? "" : appDate(dates.from);
    const toDate = dates.to === undefined ? "" : appDate(dates.to);
    return {
      name: `scenario_daily_metrics_${scenario._id}_${record.id}`,
      ext: "xlsx",
      write: (path) =>
        writeScenarioXlsx(world.scenarioReport(scenario, fromDate, toDate), path, {
          fromDate,
          toDate,
        }),
    };
  }

  function newProducer(): NonNullable<JobRecord["producer"]> {
    return { pid: process.pid, host, token: randomBytes(8).toString("hex") };
  }

  /** Writes the record's file; `record.producer` is this process's claim on it. */
  function run(record: JobRecord): void {
    const token = record.producer?.token;
    const steps = plan(record);
    const started = Date.now();
    const finish = (change: (r: JobRecord) => void) =>
      records.update(record.id, (r) => {
        if (r.producer?.token !== token) return false;
        change(r);
        r.producer = undefined;
        return true;
      });
    const work = (async () => {
      if (steps === undefined) throw new Error("the job's campaign or scenario is gone");
      const path = join(options.fileDir, `${record.id}.${steps.ext}`);
      const temp = ownedTempPath(path, "tmp");
      try {
        await steps.write(temp, stop.signal);
        if (stop.signal.aborted) throw new Error("stopped");
        await rename(temp, path);
      } finally {
        await rm(temp, { force: true });
      }
      const { size } = await stat(path);
      await finish((r) => {
        r.meta = { name: steps.name, ext: steps.ext, size };
        r.completedAt = clock.now();
      });
      log.debug("sandbox export file ready", {
        job: record.id,
        bytes: size,
        ms: Date.now() - started,
      });
    })().catch(async (error: unknown) => {
      // Stopped: the job is not failed; whoever reads it next writes the file.
      if (stop.signal.aborted) return;
      log.warn("sandbox export file failed", { job: record.id, error: String(error) });
      await finish((r) => {
        r.productionFailed = true;
      }).catch(() => undefined);
    });
    running.set(record.id, work);
    if (token !== undefined) runningTokens.add(token);
    void work.finally(() => {
      running.delete(record.id);
      if (token !== undefined) runningTokens.delete(token);
    });
  }

  /** A producer of another process on this host that no longer runs (or a leftover of ours). */
  function abandoned(producer: NonNullable<JobRecord["producer"]>): boolean {
    if (producer.host !== host) return false;
    if (producer.pid === process.pid) return !runningTokens.has(producer.token);
    return !processAlive(producer.pid);
  }

  return {
    newProducer,

    /** Starts writing a new job's file (its record already names this process). */
    start(record: JobRecord): void {
      run(record);
    },

    /**
     * The record as it should be read now: a job whose producer is gone is taken over (one
     * reader wins, under the record's lock) and its file written again here.
     */
    async resume(record: JobRecord): Promise<JobRecord> {
      const producer = record.producer;
      if (producer === undefined || running.has(record.id) || !abandoned(producer)) return record;
      const mine = newProducer();
      const taken = await records.update(record.id, (r) => {
        if (r.producer?.token !== producer.token) return false;
        r.producer = mine;
        return true;
      });
      if (taken?.producer?.token === mine.token) {
        log.info("sandbox export job resumed", { job: record.id });
        run(taken);
      }
      return taken ?? record;
    },

    /**
     * Waits up to `ms` for the job's file: on this process's writer, or by reading the record
     * again while another process writes it. Resolves to the record as it is then.
     */
    async waitForFile(record: JobRecord, ms: number): Promise<JobRecord> {
      const work = running.get(record.id);
      if (work !== undefined) {
        await waitAtMost(work, ms, stop.signal);
        return (await records.get(record.id)) ?? record;
      }
      const until = performance.now() + ms;
      let current = record;
      while (
        current.producer !== undefined &&
        current.meta === undefined &&
        !current.productionFailed &&
        performance.now() < until &&
        !stop.signal.aborted
      ) {
        await sleep(OTHER_WRITER_POLL_MS);
        current = (await records.get(record.id)) ?? current;
      }
      return current;
    },

    /** Stops writers and waits for them to let go of their files. */
    async close(): Promise<void> {
      stop.abort();
      await Promise.allSettled([...running.values()]);
    },
  };
}

export type Production = ReturnType<typeof createProduction>;
