#!/usr/bin/env node
/**
 * Benchmark of the first question on a just-downloaded export (run after `npm run build`): the
 * same question asked in a fresh process of DuckDB over the export's CSV (what query_export ran
 * before the history, and what DuckDB itself takes) and over the history's copy of the export, as
 * query_export reads it when the history holds it whole (src/tools/query-export/history-rows.ts:
 * the catalogue read, `jobRows`, the query over its Parquet). Target: at most 0.5x the CSV's time.
 *
 * The export is the shapes bench's "max job": the sandbox's huge campaign, rounds up to
 * BENCH_SENDS (default 2000000) sends, rows by time, 24-hex service IDs, the file bench/history.mjs
 * writes (found in BENCH_FILES when it kept one there, else written here), or the campaign CSV
 * BENCH_CSV names. Its history is made once (kept in BENCH_FILES between runs). Four questions, each run BENCH_RUNS times (default 3)
 * on each side, the two sides alternating which goes first; each in a child process with DuckDB's
 * library loaded before the clock starts (a server has it loaded once it added the export). Per
 * question: wall and CPU seconds of each side (medians), the median of the paired wall ratios,
 * the load average after; the two sides' answers must be the same. BENCH_DIST names another
 * build. Prints one JSON line per question and fails when a ratio is above 0.5.
 */
import { mkdir, mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { largeExport } from "./lib/large-export.mjs";
import { load, median, runChild } from "./lib/measure.mjs";

const here = fileURLToPath(new URL(".", import.meta.url));
const dist = resolve(process.env.BENCH_DIST ?? join(here, "..", "dist"));
/** bench/history.mjs's clock: the huge campaign's rounds lie before it. */
const NOW = Date.parse("2024-06-15T03:00:00Z");
const LIMITS = { memoryMb: 1024, threads: 2, timeoutSeconds: 600 };
const JOB = "job-large";

const QUESTIONS = {
  event_types: "SELECT event_type, count(*) AS n FROM events GROUP BY 1 ORDER BY 1",
  users_by_type:
    "SELECT event_type, count(DISTINCT coalesce(platform_user_id, user_id)) AS users FROM events GROUP BY 1 ORDER BY 1",
  opens_by_hour:
    "SELECT hour(captured_at) AS hour, count(*) AS opens FROM events WHERE event_role = 'open' GROUP BY 1 ORDER BY 1",
  per_round:
    "SELECT task_id, scheduled_at, \"group\", count(*) FILTER (WHERE event_role = 'sent') AS sent, count(*) FILTER (WHERE event_role = 'open') AS opened FROM events GROUP BY ALL ORDER BY ALL",
};

async function openHistory(folder) {
  const { History } = await import(join(dist, "history", "history.js"));
  const { FileCatalogueStore } = await import(join(dist, "history", "catalogue-file.js"));
  return new History({
    folder,
    store: new FileCatalogueStore(join(folder, "catalogue.json")),
    keepDays: 4000,
    timeZone: "Asia/Seoul",
    now: () => NOW,
  });
}

const step = process.argv[2];
if (step === "--ingest") {
  const [, , , file, folder] = process.argv;
  const history = await openHistory(folder);
  const result = await history.ingestCampaignExport({
    path: file,
    jobId: JOB,
    campaignId: "cmp_huge",
    window: {},
    jobCreatedAt: new Date(NOW).toISOString(),
  });
  await history.close();
  process.stdout.write(JSON.stringify({ rows: result.rows }));
  process.exit(0);
}
if (step === "--ask") {
  const [, , , side, question, file, folder] = process.argv;
  const { loadDuckDb } = await import(join(dist, "query", "engine.js"));
  const { queryFiles } = await import(join(dist, "query", "index.js"));
  const { historyRows } = await import(join(dist, "tools", "query-export", "history-rows.js"));
  let started = performance.now();
  await loadDuckDb();
  const loadSeconds = (performance.now() - started) / 1000;
  const history = side === "history" ? await openHistory(folder) : undefined;
  started = performance.now();
  const before = process.cpuUsage();
  const kept = history === undefined ? undefined : historyRows(async () => history);
  const answer = await queryFiles({
    sql: QUESTIONS[question],
    files: [{ path: file, jobId: JOB }],
    limits: LIMITS,
    maxRows: 1000,
    spillParent: folder,
    ...(kept === undefined ? {} : { keptRows: kept.lookup }),
  });
  const seconds = (performance.now() - started) / 1000;
  const spent = process.cpuUsage(before);
  if (kept !== undefined && kept.used.length === 0) {
    throw new Error("the history does not hold the export whole: the CSV was read");
  }
  await history?.close();
  process.stdout.write(
    JSON.stringify({
      seconds,
      cpuSeconds: (spent.user + spent.system) / 1e6,
      loadSeconds,
      answer: { columns: answer.columns, rows: answer.rows },
    }),
  );
  process.exit(0);
}

const child = (args) => runChild(fileURLToPath(import.meta.url), args, { maxBuffer: 16 << 20 });
const round2 = (n) => Number(n.toFixed(2));

/** True when `folder` is a history holding every row of the export as JOB. */
async function holdsWhole(folder, file) {
  try {
    const catalogue = JSON.parse(await readFile(join(folder, "catalogue.json"), "utf8"));
    const record = catalogue.exports.find((e) => e.job_id === JOB);
    return record !== undefined && record.source.path === file;
  } catch {
    return false;
  }
}

const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 3));
const SENDS = Number(process.env.BENCH_SENDS ?? 2_000_000);
const keep = process.env.BENCH_FILES;
const workDir = keep ?? (await mkdtemp(join(tmpdir(), "first-question-bench-")));
if (keep) await mkdir(keep, { recursive: true });
let failed = false;
console.log(`${RUNS} runs on ${cpus().length} CPUs; load average before: ${load()}`);
try {
  const file = process.env.BENCH_CSV
    ? resolve(process.env.BENCH_CSV)
    : await largeExport(dist, workDir, SENDS, NOW);
  const folder = join(workDir, `history-of-${basename(file, ".csv")}`);
  if (!(await holdsWhole(folder, file))) {
    await rm(folder, { recursive: true, force: true });
    const started = performance.now();
    const { rows } = child(["--ingest", file, folder]);
    console.log(
      `history made: ${rows} rows in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
  }
  const csvMb = round2((await stat(file)).size / 1e6);
  for (const [qi, question] of Object.keys(QUESTIONS).entries()) {
    const runs = { csv: [], history: [] };
    for (let i = 0; i < RUNS; i++) {
      const sides = (i + qi) % 2 === 0 ? ["csv", "history"] : ["history", "csv"];
      for (const side of sides) runs[side].push(child(["--ask", side, question, file, folder]));
    }
    const same = runs.csv.every(
      (r, i) =>
        JSON.stringify(r.answer) === JSON.stringify(runs.history[i].answer) &&
        JSON.stringify(r.answer) === JSON.stringify(runs.csv[0].answer),
    );
    const ratio = median(runs.history.map((r, i) => r.seconds / runs.csv[i].seconds));
    const cpuRatio = median(runs.history.map((r, i) => r.cpuSeconds / runs.csv[i].cpuSeconds));
    const seconds = (side) => runs[side].map((r) => round2(r.seconds));
    console.log(
      JSON.stringify({
        bench: "first-question",
        question,
        csv_mb: csvMb,
        answer_rows: runs.csv[0].answer.rows.length,
        same_answer: same,
        csv_s: round2(median(runs.csv.map((r) => r.seconds))),
        csv_runs_s: seconds("csv"),
        csv_cpu_s: round2(median(runs.csv.map((r) => r.cpuSeconds))),
        history_s: round2(median(runs.history.map((r) => r.seconds))),
        history_runs_s: seconds("history"),
        history_cpu_s: round2(median(runs.history.map((r) => r.cpuSeconds))),
        ratio_paired: round2(ratio),
        cpu_ratio_paired: round2(cpuRatio),
        duckdb_load_s: round2(median([...runs.csv, ...runs.history].map((r) => r.loadSeconds))),
        load_after: load(),
      }),
    );
    if (!same) {
      failed = true;
      console.log(`FAIL: ${question}: the answers over the CSV and the history differ`);
    }
    if (ratio > 0.5) {
      failed = true;
      console.log(`FAIL: ${question}: ${ratio.toFixed(2)}x the CSV's time (target <= 0.5x)`);
    }
  }
} finally {
  if (!keep) await rm(workDir, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
