import { readdir } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { queryHistory } from "../../src/history/query.js";
import { loadDuckDb } from "../../src/query/engine.js";
import { type CsvRow, type HistoryFixture, historyFixture, writeCampaignCsv } from "./fixtures.js";

/**
 * The rule of the history against a brute-force model, over random overlapping exports written
 * as real CSV files and added in a random order: a send round (task_id, scheduled_at, group) is
 * kept from the newest export that holds it (by the job's creation time; a tie goes to the
 * greater job ID), every row of it that export holds (identical rows included), and nothing of
 * a round dated before the kept days (400 days back from 2026-11-20: 2025-10-16).
 */

const ROUNDS = [
  { task: "t1", at: "2026-09-30 23:00:00", group: "" },
  { task: "t1", at: "2026-09-30 23:00:00", group: "그룹A" },
  { task: "t2", at: "2026-10-01 09:00:00", group: "" },
  { task: "t3", at: "2026-11-02 10:00:00", group: "대조군" },
  { task: 't, "4"', at: "2026-11-02 10:00:00", group: "" },
  // Before the kept days: never in the history.
  { task: "t0", at: "2025-09-01 09:00:00", group: "" },
] as const;
const CAMPAIGNS = ["c1", "c2"] as const;
const CREATED = ["2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z", "2026-11-03T00:00:00Z"];
const EVENTS = ["message_sent", "message_received", "push_opened", "purchase"];

interface ModelExport {
  jobId: string;
  campaign: string;
  createdAt: string;
  rounds: { round: number; rows: { user: number; event: number; minute: number }[] }[];
}

const rowArb = fc.record({
  user: fc.integer({ min: 0, max: 2 }),
  event: fc.integer({ min: 0, max: EVENTS.length - 1 }),
  // Few distinct minutes: identical rows inside one round are common.
  minute: fc.integer({ min: 0, max: 1 }),
});
const exportArb = fc.record({
  campaign: fc.constantFrom(...CAMPAIGNS),
  createdAt: fc.constantFrom(...CREATED),
  rounds: fc.uniqueArray(
    fc.record({
      round: fc.integer({ min: 0, max: ROUNDS.length - 1 }),
      rows: fc.array(rowArb, { minLength: 1, maxLength: 4 }),
    }),
    { minLength: 1, maxLength: ROUNDS.length, selector: (r) => r.round },
  ),
});
const scenarioArb = fc.array(exportArb, { minLength: 1, maxLength: 5 }).chain((exports) =>
  fc.record({
    exports: fc.constant(
      exports.map((e, i): ModelExport => ({ ...e, jobId: `job-${String.fromCharCode(97 + i)}` })),
    ),
    order: fc.shuffledSubarray(
      exports.map((_, i) => i),
      { minLength: exports.length, maxLength: exports.length },
    ),
  }),
);

function csvRows(e: ModelExport): CsvRow[] {
  return e.rounds.flatMap(({ round, rows }) => {
    const r = ROUNDS[round] as (typeof ROUNDS)[number];
    return rows.map((row) => ({
      task_id: r.task,
      scheduled_at: r.at,
      group: r.group,
      event_type: EVENTS[row.event] as string,
      user_id: `u${row.user}`,
      platform_user_id: `pu${row.user}`,
      captured_at: `${r.at.slice(0, 14)}3${row.minute}:00`,
      channel: row.event < 2 ? "app_push" : "",
      event_properties: "{}",
    }));
  });
}

/** The rows of every Parquet file under `folder/dataset`, read as one hive dataset. */
async function globbed(folder: string, dataset: string, select: string): Promise<string[]> {
  const duck = await loadDuckDb();
  const db = await duck.DuckDBInstance.create(":memory:");
  const c = await db.connect();
  try {
    const files = (await readdir(join(folder, dataset), { recursive: true }).catch(() => []))
      .filter((name) => name.endsWith(".parquet"))
      .map((name) => `'${join(folder, dataset, name)}'`);
    const reader = await c.runAndReadAll(
      files.length === 0
        ? "SELECT 1 WHERE false"
        : `${select} FROM read_parquet([${files.join(", ")}], hive_partitioning = true)`,
    );
    return reader
      .getRows()
      .map((r) => JSON.stringify(r))
      .sort();
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

/** One line per row as the history gives it back, in the model's words. */
function line(campaign: string, jobId: string, row: CsvRow): string {
  return JSON.stringify([
    campaign,
    jobId,
    row.task_id,
    row.scheduled_at,
    row.group === "" ? null : row.group,
    row.event_type,
    row.user_id,
    row.captured_at,
  ]);
}

/** The brute-force model: per campaign and round, the newest holder's rows. */
function expected(exports: readonly ModelExport[]): string[] {
  const out: string[] = [];
  for (const campaign of CAMPAIGNS) {
    ROUNDS.forEach((round, index) => {
      if (round.at < "2025-10-16") return;
      const holders = exports.filter(
        (e) => e.campaign === campaign && e.rounds.some((r) => r.round === index),
      );
      const newest = holders.reduce<ModelExport | undefined>((best, e) => {
        if (best === undefined) return e;
        const key = (x: ModelExport) => `${x.createdAt}|${x.jobId}`;
        return key(e) > key(best) ? e : best;
      }, undefined);
      if (newest === undefined) return;
      const only = { ...newest, rounds: newest.rounds.filter((r) => r.round === index) };
      for (const row of csvRows(only)) out.push(line(campaign, newest.jobId, row));
    });
  }
  return out.sort();
}

/**
 * The messages the kept rows make (one per campaign, round and user: when first received, and
 * which roles the user's rows have), in the words of MESSAGES_SELECT.
 */
function expectedMessages(exports: readonly ModelExport[]): string[] {
  const messages = new Map<
    string,
    { key: unknown[]; received: string | null; flags: Set<string> }
  >();
  for (const text of expected(exports)) {
    const [campaign, jobId, task, at, group, event, user, captured] = JSON.parse(text) as string[];
    const id = JSON.stringify([campaign, jobId, task, at, group, user]);
    const m = messages.get(id) ?? {
      key: [campaign, jobId, task, at, group, `p${user}`],
      received: null,
      flags: new Set<string>(),
    };
    m.flags.add(event as string);
    if (
      event === "message_received" &&
      (m.received === null || (captured as string) < m.received)
    ) {
      m.received = captured as string;
    }
    messages.set(id, m);
  }
  return [...messages.values()]
    .map((m) =>
      JSON.stringify([
        ...m.key,
        m.received,
        m.flags.has("message_sent"),
        m.flags.has("push_opened"),
        m.flags.has("purchase"),
      ]),
    )
    .sort();
}

const LIMITS = { memoryMb: 256, threads: 1, timeoutSeconds: 60 };
const SELECT =
  "SELECT campaign_id, job_id, task_id, strftime(scheduled_at, '%Y-%m-%d %H:%M:%S'), \"group\", event_type, user_id, strftime(captured_at, '%Y-%m-%d %H:%M:%S')";

const MESSAGES_SELECT =
  "SELECT campaign_id, job_id, task_id, strftime(scheduled_at, '%Y-%m-%d %H:%M:%S'), \"group\", CAST(user_key AS VARCHAR), strftime(received_at, '%Y-%m-%d %H:%M:%S'), sent, opened, converted";

let run = 0;
let f: HistoryFixture | undefined;

beforeAll(async () => {
  await loadDuckDb();
});
afterAll(async () => {
  await f?.close();
});

describe("a round is kept from the newest export that holds it", () => {
  it("matches the brute-force model over random overlapping exports added in any order", async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ exports, order }) => {
        await f?.close();
        f = await historyFixture();
        const fixture = f;
        for (const index of order) {
          const e = exports[index] as ModelExport;
          const path = join(fixture.dir, `${e.jobId}-${run++}.csv`);
          await writeCampaignCsv(path, csvRows(e));
          await fixture.history.ingestCampaignExport({
            path,
            jobId: e.jobId,
            campaignId: e.campaign,
            window: {},
            jobCreatedAt: e.createdAt,
          });
        }
        const got = await queryHistory(fixture.history, {
          sql: `${SELECT} FROM history`,
          maxRows: 10_000,
          limits: LIMITS,
          spillParent: fixture.dir,
        });
        const lines = got.rows.map((r) => JSON.stringify(r)).sort();
        expect(lines).toEqual(expected(exports));
        const messages = await queryHistory(fixture.history, {
          sql: `${MESSAGES_SELECT} FROM history_messages`,
          maxRows: 10_000,
          limits: LIMITS,
          spillParent: fixture.dir,
        });
        const messageLines = messages.rows.map((r) => JSON.stringify(r)).sort();
        // The model names users by their text; user_key is its hash.
        const users = await queryHistory(fixture.history, {
          sql: "SELECT DISTINCT CAST(hash(coalesce(platform_user_id, user_id)) AS VARCHAR), coalesce(platform_user_id, user_id) FROM history",
          maxRows: 100,
          limits: LIMITS,
          spillParent: fixture.dir,
        });
        const userOf = new Map(users.rows.map((r) => [r[0], r[1]]));
        expect(
          messages.rows
            .map((r) => JSON.stringify([...r.slice(0, 5), userOf.get(r[5]), ...r.slice(6)]))
            .sort(),
        ).toEqual(expectedMessages(exports));
        // Any reader of the folder as it is (a glob of every Parquet file of a dataset, hive
        // partitions) sees the same rows: no stale or partial file is left beside the live ones.
        expect(await globbed(fixture.history.folder, "events", SELECT)).toEqual(lines);
        expect(await globbed(fixture.history.folder, "messages", MESSAGES_SELECT)).toEqual(
          messageLines,
        );
      }),
      { numRuns: 20, endOnFailure: true },
    );
  }, 600_000);
});
