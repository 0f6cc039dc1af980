import { mkdir, rename, stat, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { LockTimeoutError, withFileLock } from "../file-io/file-lock.js";
import { log } from "../log.js";
import {
  type ExportRecord,
  type HistoryCatalogue,
  type Partition,
  partitionFiles,
} from "./catalogue.js";
import { HistoryError } from "./errors.js";
import { lockTarget, messagesPartitionDir, newPartitionFile } from "./layout.js";
import type { CatalogueStore } from "./store.js";
import { sweepHistory } from "./sweep.js";

/** A partition's new content, written whole in the staging folder, and its record. */
export interface StagedPartition {
  /** The staged file (absolute path). */
  staged: string;
  /** An events partition's staged messages file (absolute), its rows and key probe. */
  messages?: { staged: string; rows: number; key_probe: string } | undefined;
  record: DistributiveOmit<Partition, "file" | "bytes" | "messages">;
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** One commit: planned on `base`; partitions written and dropped, export records put. */
export interface PlannedCommit {
  base: HistoryCatalogue;
  write: StagedPartition[];
  drop: string[];
  putExports: ExportRecord[];
}

export interface CommitTarget {
  folder: string;
  store: CatalogueStore;
}

/**
 * Makes a planned change live, under the history's lock: the catalogue must still be at the
 * plan's generation (else undefined: plan again); leftovers of killed processes are swept; each
 * staged file (and an events partition's messages file) is renamed to a new name in its
 * partition folder; one catalogue commit names them (the moment the change becomes visible,
 * whole); then the files it no longer names go. A commit that fails removes the files it had
 * moved, so nothing is left that a later sweep would not remove anyway.
 */
export async function commitPlanned(
  target: CommitTarget,
  plan: PlannedCommit,
): Promise<HistoryCatalogue | undefined> {
  return withHistoryLock(target.folder, async () => {
    const current = await target.store.read();
    if (current.generation !== plan.base.generation) return undefined;
    await sweepHistory(target.folder, current);
    const generation = current.generation + 1;
    const moved: string[] = [];
    const partitions: Partition[] = [];
    let next: HistoryCatalogue;
    try {
      const place = async (staged: string, dir: string) => {
        const file = newPartitionFile(dir, generation);
        const path = join(target.folder, file);
        await mkdir(dirname(path), { recursive: true });
        await rename(staged, path);
        moved.push(path);
        return { file, bytes: (await stat(path)).size };
      };
      for (const { staged, messages, record } of plan.write) {
        const placed = await place(staged, record.dir);
        if (messages === undefined || record.dataset !== "events") {
          partitions.push({ ...record, ...placed } as Partition);
        } else {
          const m = await place(messages.staged, messagesPartitionDir(record.dir));
          const { rows, key_probe } = messages;
          partitions.push({ ...record, ...placed, messages: { ...m, rows, key_probe } });
        }
      }
      next = await target.store.commit(current.generation, {
        putExports: plan.putExports,
        putPartitions: partitions,
        dropPartitions: plan.drop,
      });
    } catch (error) {
      for (const path of moved) await unlink(path).catch(() => undefined);
      throw error;
    }
    const live = new Set(partitions.map((p) => p.dir));
    const replaced = current.partitions.filter((p) => live.has(p.dir) || plan.drop.includes(p.dir));
    for (const file of replaced.flatMap(partitionFiles)) {
      // A query reading it at this moment retries on the new catalogue (session.ts).
      await unlink(join(target.folder, file)).catch((error: unknown) => {
        log.warn("history: a replaced file could not be removed (the sweep will)", {
          file,
          error: error instanceof Error ? error.message : String(error),
        });
      });
    }
    return next;
  });
}

/** Runs `work` holding the history's cross-process lock. */
export async function withHistoryLock<T>(folder: string, work: () => Promise<T>): Promise<T> {
  try {
    return await withFileLock(lockTarget(folder), work);
  } catch (error) {
    if (!(error instanceof LockTimeoutError)) throw error;
    throw new HistoryError(
      `the history in ${folder} stayed locked by another process (adding an export or pruning); nothing was changed. Retry shortly.`,
      "busy",
    );
  }
}
