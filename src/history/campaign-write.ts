import { join } from "node:path";
import { sqlString } from "../query/events-view.js";
import type { PartitionAction } from "./campaign-plan.js";
import type { KeptRound } from "./catalogue.js";
import type { StagedPartition } from "./commit.js";
import { messagesSql, USER_KEY_PROBE_SQL } from "./messages.js";
import { fileListSql, PARQUET_OPTIONS } from "./parquet.js";
import type { WorkEngine } from "./work-engine.js";

/**
 * Carries out a plan's `move` and `rewrite` actions in the staging folder: a rewrite copies the
 * rows of its sources whose (round, job_id) it keeps into one new file. Every file's row count
 * is checked against the rows its rounds had in their exports, so a file is never committed with
 * rows missing or doubled. Each events file gets its messages file (messages.ts), grouped from
 * that file alone: the two always hold the same rounds from the same exports.
 */
export async function writeCampaignPartitions(
  engine: WorkEngine,
  folder: string,
  staging: string,
  actions: PartitionAction[],
): Promise<StagedPartition[]> {
  const out: StagedPartition[] = [];
  let n = 0;
  const probe = String((await engine.rows(USER_KEY_PROBE_SQL))[0]?.[0]);
  for (const action of actions) {
    if (action.kind === "drop") continue;
    let staged: string;
    if (action.kind === "move") staged = action.file;
    else {
      staged = join(staging, `partition-${n++}.parquet`);
      const sources = [
        ...(action.sources.live === null ? [] : [join(folder, action.sources.live)]),
        ...action.sources.staged,
      ];
      await engine.run(keepTableSql(action.keep));
      // hive_partitioning off: the folder names' keys must not become columns of the new file.
      await engine.run(
        `COPY (SELECT e.* FROM read_parquet(${fileListSql(sources)}, hive_partitioning = false, union_by_name = true) e SEMI JOIN keep_rounds k ON e.task_id IS NOT DISTINCT FROM k.task_id AND e.scheduled_at = k.scheduled_at AND e."group" IS NOT DISTINCT FROM k.grp AND e.job_id = k.job_id) TO ${sqlString(staged)} (${PARQUET_OPTIONS})`,
      );
    }
    const rows = action.keep.reduce((sum, r) => sum + r.rows, 0);
    const written = await engine.rows(
      `SELECT count(*) FROM read_parquet(${sqlString(staged)}, hive_partitioning = false)`,
    );
    if (Number(written[0]?.[0]) !== rows) {
      throw new Error(
        `history: the new file of ${action.dir} holds ${String(written[0]?.[0])} rows where its rounds had ${rows}; nothing was committed.`,
      );
    }
    const messages = join(staging, `messages-${n++}.parquet`);
    const counted = await oneThread(engine, () =>
      engine.rows(
        `COPY (${messagesSql(`read_parquet(${sqlString(staged)}, hive_partitioning = false)`)}) TO ${sqlString(messages)} (${PARQUET_OPTIONS})`,
      ),
    );
    out.push({
      staged,
      messages: { staged: messages, rows: Number(counted[0]?.[0] ?? 0), key_probe: probe },
      record: {
        dataset: "events",
        dir: action.dir,
        campaign_id: action.campaignId,
        round_month: action.month,
        rows,
        rounds: action.keep,
      },
    });
  }
  return out;
}

/**
 * Runs `work` on one thread: grouping an export's millions of messages on two threads holds two
 * hash tables' worth of memory outside DuckDB's limit and took the process adding the largest
 * export over 300 MB; on one it uses less CPU too (bench/RESULTS.md).
 */
async function oneThread<T>(engine: WorkEngine, work: () => Promise<T>): Promise<T> {
  const threads = await engine.rows("SELECT current_setting('threads')");
  await engine.run("SET threads = 1");
  try {
    return await work();
  } finally {
    await engine.run(`SET threads = ${Number(threads[0]?.[0] ?? 1)}`);
  }
}

function keepTableSql(keep: readonly KeptRound[]): string {
  const text = (v: string | null) => (v === null ? "CAST(NULL AS VARCHAR)" : sqlString(v));
  const values = keep
    .map(
      (r) =>
        `(${text(r.task_id)}, TIMESTAMP ${sqlString(r.scheduled_at)}, ${text(r.group)}, ${sqlString(r.job_id)})`,
    )
    .join(", ");
  return `CREATE OR REPLACE TEMP TABLE keep_rounds AS SELECT * FROM (VALUES ${values}) AS t(task_id, scheduled_at, grp, job_id)`;
}
