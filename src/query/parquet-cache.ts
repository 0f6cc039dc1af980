import { mkdir, realpath, rename, rm, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { QueryLimits } from "../config.js";
import { ownedTempPath } from "../file-io/orphan-files.js";
import { log } from "../log.js";
import { cachePath, fileFingerprint } from "./cache-files.js";
import { type DuckDb, loadDuckDb } from "./engine.js";
import { QueryError } from "./errors.js";
import {
  csvReadSql,
  type EventsFile,
  type KeptEventRows,
  sqlString,
  typedColumnsSql,
} from "./events-view.js";
import type { QuerySource } from "./sources.js";

/**
 * Each campaign CSV of the data folder's exports is converted once to Parquet (columnar,
 * compressed, typed): every later question reads only the columns it needs. A small export is
 * converted before its first question (cheap); a large one is answered from the CSV, which is as
 * fast as converting it, while its copy is made in the background for the next question. A file
 * outside `exports/` (or any file, when no data folder is given) is read as CSV every time.
 */
export interface CacheOptions {
  dataFolder: string;
  exportsFolder: string;
  limits: QueryLimits;
  signal?: AbortSignal;
  /** Called before a conversion starts, with the file and its size (progress for the call). */
  onConvert?: (source: QuerySource, when: "now" | "background") => Promise<void> | void;
  /** Exports up to this size are converted before their first question; default 64 MiB. */
  convertNowBytes?: number;
}

const CONVERT_NOW_BYTES = 64 * 1024 * 1024;

/** A conversion is bounded apart from the query timeout: a CSV of the largest size takes a while. */
const CONVERSION_TIMEOUT_MS = 10 * 60 * 1000;

/** Conversions under way in this process, by cache path: two queries share one. */
const converting = new Map<string, Promise<void>>();

/**
 * Where an export's rows are kept whole besides its file (the history's Parquet, given by the
 * caller: this module may not know the history); "coming" while they are being kept (the file
 * is read, and no copy of it is begun: the kept rows serve the next question); undefined to
 * read the file as usual.
 */
export type KeptRowsLookup = (source: QuerySource) => Promise<KeptEventRows | "coming" | undefined>;

export async function eventsFiles(
  sources: QuerySource[],
  options: CacheOptions | undefined,
  keptRows?: KeptRowsLookup,
): Promise<EventsFile[]> {
  const out: EventsFile[] = [];
  // Sources are real paths: the folder is compared as one too (macOS's /tmp is /private/tmp).
  const exports =
    options === undefined
      ? undefined
      : await realpath(options.exportsFolder).catch(() => options.exportsFolder);
  for (const source of sources) {
    if (source.kind !== "campaign_csv") continue;
    // Rows kept whole elsewhere are already typed and columnar: read there, this export gets no
    // copy of its own (neither before the question nor in the background), which would cost a
    // full read of the CSV for nothing.
    const kept = source.jobId === null ? undefined : await keptRows?.(source);
    if (kept !== undefined && kept !== "coming") {
      out.push(kept);
      continue;
    }
    const cached =
      options !== undefined && dirname(source.path) === exports
        ? await copyOrBackground(source, options, kept !== "coming")
        : undefined;
    out.push(
      cached === undefined
        ? { path: source.path, format: "csv", jobId: source.jobId }
        : { path: cached, format: "parquet", jobId: source.jobId },
    );
  }
  return out;
}

/**
 * The copy when it exists or is cheap to make now; otherwise undefined, and it is made later.
 * `make` false: only a copy that exists.
 */
async function copyOrBackground(
  source: QuerySource,
  options: CacheOptions,
  make: boolean,
): Promise<string | undefined> {
  const target = cachePath(options.dataFolder, source.path, await fileFingerprint(source.path));
  if (await exists(target)) return target;
  if (!make) return undefined;
  if (source.bytes <= (options.convertNowBytes ?? CONVERT_NOW_BYTES)) {
    return parquetCopy(source, options);
  }
  if (!converting.has(target)) {
    await options.onConvert?.(source, "background");
    // Owned by the process, not by the call: neither its cancellation nor its end stops it. One
    // thread, so the question being answered keeps the other core.
    const background = { ...options, limits: { ...options.limits, threads: 1 } };
    delete background.signal;
    const pending = convert(source.path, target, background)
      .catch((error: unknown) => {
        log.warn(`The Parquet copy of ${source.path} could not be made: ${String(error)}`);
      })
      .finally(() => converting.delete(target));
    converting.set(target, pending);
  }
  return undefined;
}

/** Settles when every conversion under way in this process has ended (made or failed). */
export async function conversionsSettled(): Promise<void> {
  while (converting.size > 0) await Promise.allSettled([...converting.values()]);
}

/** The Parquet copy of `source`, made now if there is none. */
export async function parquetCopy(source: QuerySource, options: CacheOptions): Promise<string> {
  const target = cachePath(options.dataFolder, source.path, await fileFingerprint(source.path));
  if (await exists(target)) return target;
  let pending = converting.get(target);
  if (pending === undefined) {
    await options.onConvert?.(source, "now");
    pending = convert(source.path, target, options).finally(() => converting.delete(target));
    converting.set(target, pending);
  }
  await pending;
  return target;
}

async function exists(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isFile() === true;
}

/**
 * Written to a temporary file of this process and renamed when whole, so a reader never sees a
 * partial copy and a crash leaves only a temporary file the cache sweep removes.
 */
async function convert(csv: string, target: string, options: CacheOptions): Promise<void> {
  const duck: DuckDb = await loadDuckDb();
  await mkdir(dirname(target), { recursive: true });
  const temp = ownedTempPath(join(dirname(target), ".convert"), "tmp");
  const instance = await duck.DuckDBInstance.create(":memory:", {
    threads: String(options.limits.threads),
    memory_limit: `${options.limits.memoryMb}MB`,
    temp_directory: `${temp}.spill`,
    autoinstall_known_extensions: "false",
    autoload_known_extensions: "false",
  });
  const connection = await instance.connect();
  let stopped: "timeout" | "cancelled" | undefined;
  const stop = (why: "timeout" | "cancelled") => {
    stopped ??= why;
    connection.interrupt();
  };
  const timer = setTimeout(() => stop("timeout"), CONVERSION_TIMEOUT_MS);
  const onAbort = () => stop("cancelled");
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    await connection.run(
      `COPY (SELECT ${typedColumnsSql()} FROM ${csvReadSql([csv])}) TO ${sqlString(temp)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)`,
    );
    await rename(temp, target);
  } catch (error) {
    if (stopped === "cancelled") throw new QueryError("the query was cancelled.", "cancelled");
    if (stopped === "timeout") {
      throw new QueryError(
        "converting the export for queries took longer than 10 minutes and was stopped; retry, or query a shorter export.",
        "timeout",
      );
    }
    throw error;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
    connection.closeSync();
    instance.closeSync();
    await rm(temp, { force: true });
    await rm(`${temp}.spill`, { recursive: true, force: true });
  }
}
