#!/usr/bin/env node
/**
 * Benchmark of the history (src/history/, run after `npm run build`), each measurement in a fresh
 * child process so its time and peak RSS are its own:
 * 1. adding the largest campaign export one job may hold (the sandbox's huge campaign, rounds up
 *    to 2,000,000 sends, rows interleaved by time, 24-hex service IDs: the shapes bench's
 *    "max job") against summarize_export on the same file, runs alternating; targets: at most
 *    2x the summary's time, at most 300 MiB peak RSS;
 * 2. the history's size on disk against the CSV bytes it came from; target at most 25%;
 * 3. the fatigue example (src/history/examples.ts, over `history_messages`) on a history of 30
 *    campaign exports of 10,000,000 events together (written here by DuckDB, then added one by
 *    one, timed too); target at most 1 s, DuckDB's library already loaded as in a running server.
 *    A history kept by BENCH_FILES without messages files is added again.
 *
 * BENCH_SENDS (default 2000000) scales the large export; BENCH_EVENTS (default 10000000) and
 * BENCH_EXPORTS (default 30) the fatigue history; BENCH_RUNS (default 3) the repetitions;
 * BENCH_FILES=DIR keeps the generated files between runs; BENCH_ONLY=ingest|fatigue runs one
 * part. Prints one JSON line per part and fails when a target is missed.
 */
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { largeExport } from "./lib/large-export.mjs";
import { exists, load, median, runChild } from "./lib/measure.mjs";

const here = fileURLToPath(new URL(".", import.meta.url));
const dist = resolve(process.env.BENCH_DIST ?? join(here, "..", "dist"));
const NOW = Date.parse("2024-06-15T03:00:00Z");
const LIMITS = { memoryMb: 1024, threads: 2, timeoutSeconds: 600 };

function usage() {
  const u = process.resourceUsage();
  return { cpuSeconds: (u.userCPUTime + u.systemCPUTime) / 1e6, maxRssMb: u.maxRSS / 1024 };
}

async function openHistory(folder, keepDays = 4000) {
  const { History } = await import(join(dist, "history", "history.js"));
  const { FileCatalogueStore } = await import(join(dist, "history", "catalogue-file.js"));
  return new History({
    folder,
    store: new FileCatalogueStore(join(folder, "catalogue.json")),
    keepDays,
    timeZone: "Asia/Seoul",
    now: () => NOW,
  });
}

const step = process.argv[2];
if (step === "--summarize") {
  const { summarizeFile } = await import(join(dist, "analysis", "index.js"));
  const started = performance.now();
  const result = await summarizeFile(process.argv[3]);
  process.stdout.write(
    JSON.stringify({
      seconds: (performance.now() - started) / 1000,
      rows: result.rows,
      ...usage(),
    }),
  );
  process.exit(0);
}
if (step === "--ingest") {
  // Times the whole call a server makes after a download, DuckDB's first load included.
  const [, , , file, folder, jobId, campaignId] = process.argv;
  const started = performance.now();
  const history = await openHistory(folder);
  const result = await history.ingestCampaignExport({
    path: file,
    jobId,
    campaignId,
    window: {},
    jobCreatedAt: new Date(NOW).toISOString(),
  });
  process.stdout.write(
    JSON.stringify({
      seconds: (performance.now() - started) / 1000,
      rows: result.rows,
      ...usage(),
    }),
  );
  process.exit(0);
}
if (step === "--fatigue") {
  const folder = process.argv[3];
  const { loadDuckDb } = await import(join(dist, "query", "engine.js"));
  const { queryHistory } = await import(join(dist, "history", "query.js"));
  const { HISTORY_EXAMPLES } = await import(join(dist, "history", "examples.js"));
  const sql = HISTORY_EXAMPLES.find((e) => e.name === "fatigue").sql;
  let started = performance.now();
  await loadDuckDb();
  const loadSeconds = (performance.now() - started) / 1000;
  const history = await openHistory(folder);
  const times = [];
  const cpu = [];
  let rows;
  for (let i = 0; i < 3; i++) {
    started = performance.now();
    const before = process.cpuUsage();
    const answer = await queryHistory(history, {
      sql,
      maxRows: 10,
      limits: LIMITS,
      spillParent: folder,
    });
    times.push((performance.now() - started) / 1000);
    const spent = process.cpuUsage(before);
    cpu.push((spent.user + spent.system) / 1e6);
    rows = answer.rows;
  }
  process.stdout.write(JSON.stringify({ loadSeconds, times, cpu, rows, ...usage() }));
  process.exit(0);
}

const child = (args) => runChild(fileURLToPath(import.meta.url), args);

async function treeBytes(folder) {
  let bytes = 0;
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && entry.name.endsWith(".parquet")) {
      bytes += (await stat(join(entry.parentPath, entry.name))).size;
    }
  }
  return bytes;
}

/**
 * True when `folder` is a history whose every events partition has its messages file: one kept
 * by BENCH_FILES from an earlier run of code that wrote none is added again.
 */
async function holdsMessages(folder) {
  try {
    const catalogue = JSON.parse(await readFile(join(folder, "catalogue.json"), "utf8"));
    const events = catalogue.partitions.filter((p) => p.dataset === "events");
    return events.length > 0 && events.every((p) => p.messages !== undefined);
  } catch {
    return false;
  }
}

/**
 * `exports` campaign CSVs of `events` rows together, written by DuckDB: each campaign sends a
 * round every 7 days at its own offset over 13 weeks to ~12% of 200,000 users; ~97% receive,
 * ~15% of them open. So a user gets a message from several campaigns most weeks (fatigue).
 */
async function fatigueExports(dir, events, exports) {
  const { loadDuckDb } = await import(join(dist, "query", "engine.js"));
  const duck = await loadDuckDb();
  const db = await duck.DuckDBInstance.create(":memory:", { threads: "2" });
  const c = await db.connect();
  const rounds = 13;
  // About 2.1 rows per send: sent, received (97%), opened (15% of those).
  const sendsPerRound = Math.max(1, Math.round(events / exports / rounds / 2.12));
  const files = [];
  try {
    for (let k = 0; k < exports; k++) {
      const path = join(dir, `fatigue-${events}-${exports}-${k}.csv`);
      files.push(path);
      if (await exists(path)) continue;
      await c.run(`COPY (
        WITH sends AS (
          SELECT r, s, 'tsk_' || ${k} || '_' || r AS task_id,
            TIMESTAMP '2024-03-01 09:00:00' + INTERVAL (${k % 7}) DAY + INTERVAL (7 * r) DAY + INTERVAL (${k % 12}) HOUR AS scheduled_at,
            (hash(${k}, r, s) % 200000) AS u, hash(s, r, ${k}) % 1000 AS p
          FROM range(${rounds}) t(r), range(${sendsPerRound}) v(s)),
        rows AS (
          SELECT task_id, scheduled_at, 'message_sent' AS event_type, u, scheduled_at + INTERVAL (s % 600) SECOND AS captured_at, 'app_push' AS channel FROM sends
          UNION ALL SELECT task_id, scheduled_at, 'message_received', u, scheduled_at + INTERVAL (s % 600 + 3) SECOND, 'app_push' FROM sends WHERE p < 970
          UNION ALL SELECT task_id, scheduled_at, 'push_opened', u, scheduled_at + INTERVAL (s % 600 + 3600) SECOND, NULL FROM sends WHERE p < 145)
        SELECT task_id, strftime(scheduled_at, '%Y-%m-%d %H:%M:%S') AS scheduled_at, NULL AS "group", event_type,
          'u_' || u AS user_id, 'pu_' || lpad(u::VARCHAR, 6, '0') AS platform_user_id,
          strftime(captured_at, '%Y-%m-%d %H:%M:%S') AS captured_at, channel, NULL AS error_code, NULL AS error_message,
          '{}' AS event_properties, '{}' AS custom_event_properties, '{}' AS internal_event_properties
        FROM rows) TO '${path}.part' (FORMAT csv, HEADER true)`);
      await rename(`${path}.part`, path);
    }
  } finally {
    c.closeSync();
    db.closeSync();
  }
  return files;
}

const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 3));
const SENDS = Number(process.env.BENCH_SENDS ?? 2_000_000);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000_000);
const EXPORTS = Number(process.env.BENCH_EXPORTS ?? 30);
const only = process.env.BENCH_ONLY;
const keep = process.env.BENCH_FILES;
const workDir = keep ?? (await mkdtemp(join(tmpdir(), "history-bench-")));
if (keep) await mkdir(keep, { recursive: true });
let failed = false;
const fail = (message) => {
  failed = true;
  console.log(`FAIL: ${message}`);
};
console.log(`${RUNS} runs on ${cpus().length} CPUs; load average before: ${load()}`);
try {
  if (only === undefined || only === "ingest") {
    const file = await largeExport(dist, workDir, SENDS, NOW);
    const csvBytes = (await stat(file)).size;
    const ingest = [];
    const summary = [];
    let parquetBytes = 0;
    for (let i = 0; i < RUNS; i++) {
      const sides = [
        () => summary.push(child(["--summarize", file])),
        async () => {
          const folder = join(workDir, `history-ingest-${process.pid}`);
          try {
            ingest.push(child(["--ingest", file, folder, "job-large", "cmp_huge"]));
            parquetBytes = await treeBytes(folder);
          } finally {
            await rm(folder, { recursive: true, force: true });
          }
        },
      ];
      for (const run of i % 2 === 0 ? sides : [...sides].reverse()) await run();
    }
    const ratio = median(ingest.map((r, i) => r.seconds / summary[i].seconds));
    const rss = Math.max(...ingest.map((r) => r.maxRssMb));
    const share = parquetBytes / csvBytes;
    const line = {
      bench: "history-ingest",
      csv_mb: Number((csvBytes / 1e6).toFixed(1)),
      rows: ingest[0].rows,
      ingest_s: Number(median(ingest.map((r) => r.seconds)).toFixed(2)),
      ingest_runs_s: ingest.map((r) => Number(r.seconds.toFixed(2))),
      ingest_cpu_s: Number(median(ingest.map((r) => r.cpuSeconds)).toFixed(2)),
      summary_s: Number(median(summary.map((r) => r.seconds)).toFixed(2)),
      summary_cpu_s: Number(median(summary.map((r) => r.cpuSeconds)).toFixed(2)),
      summary_runs_s: summary.map((r) => Number(r.seconds.toFixed(2))),
      ratio_paired: Number(ratio.toFixed(2)),
      ingest_peak_rss_mb: Number(rss.toFixed(0)),
      parquet_mb: Number((parquetBytes / 1e6).toFixed(1)),
      parquet_share: Number(share.toFixed(3)),
      load_after: load(),
    };
    console.log(JSON.stringify(line));
    if (ratio > 2) fail(`ingest ${ratio.toFixed(2)}x the summary (target <= 2x)`);
    if (rss > 300 * 1.048576) fail(`peak RSS ${rss.toFixed(0)} MB (target <= 300 MiB)`);
    if (share > 0.25) fail(`history ${(share * 100).toFixed(1)}% of the CSV (target <= 25%)`);
  }
  if (only === undefined || only === "fatigue") {
    const files = await fatigueExports(workDir, EVENTS, EXPORTS);
    const folder = join(workDir, `history-fatigue-${EVENTS}-${EXPORTS}`);
    let ingestSeconds = 0;
    let csvBytes = 0;
    if (!(await holdsMessages(folder))) {
      await rm(folder, { recursive: true, force: true });
      for (const [k, file] of files.entries()) {
        ingestSeconds += child(["--ingest", file, folder, `job-${k}`, `cmp_${k}`]).seconds;
      }
    }
    for (const file of files) csvBytes += (await stat(file)).size;
    const runs = [];
    for (let i = 0; i < RUNS; i++) runs.push(child(["--fatigue", folder]));
    const first = median(runs.map((r) => r.times[0]));
    const warm = median(runs.flatMap((r) => r.times.slice(1)));
    const line = {
      bench: "history-fatigue",
      exports: EXPORTS,
      events: EVENTS,
      csv_mb: Number((csvBytes / 1e6).toFixed(1)),
      parquet_mb: Number(((await treeBytes(folder)) / 1e6).toFixed(1)),
      ingest_all_s: ingestSeconds === 0 ? null : Number(ingestSeconds.toFixed(1)),
      duckdb_load_s: Number(median(runs.map((r) => r.loadSeconds)).toFixed(2)),
      first_query_s: Number(first.toFixed(2)),
      later_query_s: Number(warm.toFixed(2)),
      query_runs_s: runs.map((r) => r.times.map((t) => Number(t.toFixed(2)))),
      query_cpu_s: Number(median(runs.flatMap((r) => r.cpu)).toFixed(2)),
      peak_rss_mb: Number(Math.max(...runs.map((r) => r.maxRssMb)).toFixed(0)),
      answer: runs[0].rows,
      load_after: load(),
    };
    console.log(JSON.stringify(line));
    if (first > 1) fail(`fatigue query ${first.toFixed(2)} s (target <= 1 s)`);
  }
} finally {
  if (!keep) await rm(workDir, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
