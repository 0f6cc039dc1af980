import { mkdir, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "../file-io/atomic-file.js";
import { withFileLock } from "../file-io/file-lock.js";
import { sweepOrphanTempFiles } from "../file-io/orphan-files.js";
import { log } from "../log.js";
import { EXPORT_TYPES } from "./spec.js";

/**
 * What the sandbox remembers of one export job: everything needed to answer for it, and to
 * write its file again, in whichever process reads it next. No URL is kept, only its expiry:
 * a URL names the port and per-run signing key of the process that serves it, so each process
 * issues its own URL for the same expiry (spec 4.2: reading a job never extends it).
 */
export interface JobRecord {
  id: string;
  type: (typeof EXPORT_TYPES)[number];
  campaignId?: string | undefined;
  scenarioId?: string | undefined;
  /** The requested moments as ISO 8601 UTC instants (as the job reads them back). */
  from?: string | undefined;
  to?: string | undefined;
  /** The request's `from`/`to` as sent, to select the same data again. */
  requestFrom?: string | undefined;
  requestTo?: string | undefined;
  /** Sandbox time (epoch ms) of creation. */
  createdAt: number;
  /** The `failing_export` campaign: the job ends `failed` when its time is up. */
  designedToFail: boolean;
  productionFailed: boolean;
  /** Set once the file is whole at its final path. */
  meta?: { name: string; ext: "csv" | "xlsx"; size: number } | undefined;
  completedAt?: number | undefined;
  /** Its URL expired and the file was deleted; the job still reads `completed`. */
  fileRemoved?: boolean | undefined;
  /** Expiry (epoch ms) of the download URL, set when a reader first sees the job completed. */
  urlExpiresAtMs?: number | undefined;
  /** The process writing the file now; a reader on the same host takes over when it is gone. */
  producer?: { pid: number; host: string; token: string } | undefined;
}

/** Where one application's job records live: in memory (one process) or in a folder (shared). */
export interface JobRecords {
  get(id: string): Promise<JobRecord | undefined>;
  /** Stores a new record. */
  put(record: JobRecord): Promise<void>;
  /**
   * Reads, changes and writes one record as one step for every process sharing the folder;
   * `change` returns false to write nothing. Resolves to the record after the change.
   */
  update(id: string, change: (record: JobRecord) => boolean): Promise<JobRecord | undefined>;
  all(): Promise<JobRecord[]>;
}

/** Records of one process: the sandbox without a data folder (its default). */
export function memoryJobRecords(): JobRecords {
  const records = new Map<string, JobRecord>();
  return {
    async get(id) {
      return records.get(id);
    },
    async put(record) {
      records.set(record.id, record);
    },
    async update(id, change) {
      const record = records.get(id);
      if (record !== undefined) change(record);
      return record;
    },
    async all() {
      return [...records.values()];
    },
  };
}

const recordSchema = z.looseObject({
  id: z.string().regex(/^[0-9a-f]{24}$/),
  type: z.enum(EXPORT_TYPES),
  createdAt: z.number(),
  designedToFail: z.boolean(),
  productionFailed: z.boolean(),
});

/** Job IDs are 24 hex characters; anything else never names a file. */
const JOB_ID = /^[0-9a-f]{24}$/;

/**
 * One JSON file per job in `dir`, so two sandbox processes on one data folder (two front ends
 * of one service) share their jobs: each write replaces the whole file atomically (a reader
 * sees the old or the new record, never a mix), and changes run under the file's
 * cross-process lock so no process's change is lost.
 */
export function folderJobRecords(dir: string): JobRecords {
  const pathOf = (id: string) => join(dir, `${id}.json`);
  const read = async (id: string): Promise<JobRecord | undefined> => {
    if (!JOB_ID.test(id)) return undefined;
    let text: string;
    try {
      text = await readFile(pathOf(id), "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
    try {
      const value: unknown = JSON.parse(text);
      if (recordSchema.safeParse(value).success) return value as JobRecord;
    } catch {
      // Reported below.
    }
    log.warn("sandbox job record unreadable; the job is treated as unknown", { job: id });
    return undefined;
  };
  const write = (record: JobRecord) =>
    writeFileAtomic(pathOf(record.id), `${JSON.stringify(record)}\n`);
  let made: Promise<unknown> | undefined;
  const ensureDir = () => {
    // Temporary files of a writer that was killed go with the first use.
    made ??= mkdir(dir, { recursive: true }).then(() => sweepOrphanTempFiles([dir]));
    return made;
  };
  return {
    get: read,
    async put(record) {
      await ensureDir();
      await write(record);
    },
    async update(id, change) {
      if (!JOB_ID.test(id)) return undefined;
      await ensureDir();
      return withFileLock(pathOf(id), async () => {
        const record = await read(id);
        if (record === undefined) return undefined;
        if (change(record)) await write(record);
        return record;
      });
    },
    async all() {
      const names = await readdir(dir).catch(() => [] as string[]);
      const records: JobRecord[] = [];
      for (const name of names) {
        const id = name.endsWith(".json") ? name.slice(0, -5) : "";
        const record = JOB_ID.test(id) ? await read(id) : undefined;
        if (record !== undefined) records.push(record);
      }
      return records;
    },
  };
}
