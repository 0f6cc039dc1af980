#!/usr/bin/env node
/**
 * Benchmark of the campaign summary on export shapes we did not tune on, side by side with DuckDB
 * (2 threads, the same core aggregates) from the same run (run after `npm run build`):
 * - the same 1,000,000 sends (24-hex user IDs, e-mail-like customer IDs) in three row orders:
 *   round by round (as the sandbox writes), by phase within a round (A/B and control groups
 *   interleave row by row) and across the whole file (rounds interleave too); their summaries
 *   must be identical (the script fails otherwise);
 * - the sandbox's own ID shapes, and empty customer IDs;
 * - a 2,000,000-send export (the most one job may hold, about 630 MB here).
 * Each shape: BENCH_RUNS (default 3) alternating fresh child processes of ours and DuckDB's;
 * medians, their ratio (target: ours <= 0.67 x DuckDB) and our peak RSS (target <= 160 MB).
 * The machine's load average is printed before and after each shape: on a shared machine the
 * numbers move with it. Files go to a temp folder, deleted at the end.
 * `BENCH_SENDS=200000` scales the shapes down (the 2,000,000-send file stays unless
 * `BENCH_SKIP_BIG=1`).
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeCampaignShape } from "./lib/campaign-shapes.mjs";

const here = fileURLToPath(new URL(".", import.meta.url));
const dist = process.env.BENCH_DIST ?? join(here, "..", "dist");

if (process.argv[2] === "--ours") {
  // Child: our summary of one file; time, peak RSS and a digest of the result without its path.
  const { summarizeFile } = await import(join(dist, "analysis", "index.js"));
  const started = performance.now();
  const result = await summarizeFile(process.argv[3]);
  const seconds = (performance.now() - started) / 1000;
  const { file: _file, ...figures } = result;
  const usage = process.resourceUsage();
  process.stdout.write(
    JSON.stringify({
      seconds,
      cpuSeconds: (usage.userCPUTime + usage.systemCPUTime) / 1e6,
      rows: result.rows,
      maxRssMb: usage.maxRSS / 1024,
      digest: createHash("sha256").update(JSON.stringify(figures)).digest("hex").slice(0, 16),
    }),
  );
  process.exit(0);
}

if (process.argv[2] === "--duckdb") {
  // Child: DuckDB on 2 threads, the core aggregates of the summary in one scan: per round and
  // group, counts by event role, distinct receiving and opening users, KRW revenue; per error
  // code, failures (GROUPING SETS).
  // DuckDB is the query tool's runtime dependency; this bench only borrows it.
  const { DuckDBInstance } = await import("@duckdb/node-api").catch((error) => {
    throw new Error(
      `DuckDB (@duckdb/node-api) is needed for the comparison and could not be loaded (${error.message}); run npm ci (or npm install @duckdb/node-api) first.`,
    );
  });
  const started = performance.now();
  const instance = await DuckDBInstance.create(":memory:", { threads: "2" });
  const con = await instance.connect();
  const file = process.argv[3].replaceAll("'", "''");
  const user = "coalesce(nullif(platform_user_id, ''), user_id)";
  const opened = "event_type LIKE '%\\_opened' ESCAPE '\\'";
  const reader = await con.runAndReadAll(`
    SELECT task_id, scheduled_at, "group", error_code,
      count(*) FILTER (WHERE event_type = 'message_sent') AS sent,
      count(*) FILTER (WHERE event_type = 'message_received') AS received,
      count(*) FILTER (WHERE event_type = 'message_failed') AS failed,
      count(*) FILTER (WHERE event_type = 'control_assigned') AS control,
      count(*) FILTER (WHERE ${opened}) AS opens,
      count(*) FILTER (WHERE event_type = 'purchase') AS conversions,
      count(DISTINCT ${user}) FILTER (WHERE event_type = 'message_received') AS received_users,
      count(DISTINCT ${user}) FILTER (WHERE ${opened}) AS open_users,
      sum(TRY_CAST(json_extract_string(event_properties, '$.revenue') AS DOUBLE)) FILTER (
        WHERE event_type = 'purchase' AND json_extract_string(event_properties, '$.currency') = 'KRW'
      ) AS krw
    FROM read_csv('${file}', header = true, all_varchar = true, delim = ',', quote = '"', escape = '"')
    GROUP BY GROUPING SETS ((task_id, scheduled_at, "group"), (error_code))`);
  const groups = reader.getRowObjects().length;
  const seconds = (performance.now() - started) / 1000;
  const usage = process.resourceUsage();
  process.stdout.write(
    JSON.stringify({
      seconds,
      cpuSeconds: (usage.userCPUTime + usage.systemCPUTime) / 1e6,
      groups,
      maxRssMb: usage.maxRSS / 1024,
    }),
  );
  process.exit(0);
}

const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 3));
const SENDS = Math.max(1000, Number(process.env.BENCH_SENDS ?? 1_000_000));
const SHAPES = [
  { name: "rounds, 24-hex ids", order: "rounds", ids: "hex24", sends: SENDS, sameAs: "A" },
  { name: "groups interleaved", order: "time-in-round", ids: "hex24", sends: SENDS, sameAs: "A" },
  { name: "rounds interleaved", order: "time", ids: "hex24", sends: SENDS, sameAs: "A" },
  {
    name: "sandbox-like ids, groups interleaved",
    order: "time-in-round",
    ids: "sandbox",
    sends: SENDS,
  },
  {
    name: "empty customer ids, rounds interleaved",
    order: "time",
    ids: "empty-customer",
    sends: SENDS,
  },
  ...(process.env.BENCH_SKIP_BIG === "1"
    ? []
    : [
        {
          name: "2,000,000 sends, rounds interleaved",
          order: "time",
          ids: "hex24",
          sends: 2_000_000,
        },
      ]),
];

function child(kind, file) {
  const run = spawnSync(process.execPath, [fileURLToPath(import.meta.url), kind, file], {
    encoding: "utf8",
    maxBuffer: 1 << 20,
  });
  if (run.status !== 0) throw new Error(`${kind} child failed (exit ${run.status}): ${run.stderr}`);
  return JSON.parse(run.stdout);
}

const median = (values) => {
  const v = [...values].sort((a, b) => a - b);
  const mid = Math.floor(v.length / 2);
  return v.length % 2 === 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
};
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");

const workDir = await mkdtemp(join(tmpdir(), "shapes-bench-"));
const lines = [];
const digests = new Map();
let failed = false;
try {
  console.log(
    `${RUNS} runs per shape on ${cpus().length} CPUs; medians; load average before / after`,
  );
  for (const shape of SHAPES) {
    const file = join(workDir, "campaign.csv");
    const bytes = await writeCampaignShape(file, {
      sends: shape.sends,
      order: shape.order,
      ids: shape.ids,
    });
    const before = load();
    const ours = [];
    const duck = [];
    for (let i = 0; i < RUNS; i++) {
      // Alternating, so a change in the machine's load falls on both sides.
      if (i % 2 === 0) {
        ours.push(child("--ours", file));
        duck.push(child("--duckdb", file));
      } else {
        duck.push(child("--duckdb", file));
        ours.push(child("--ours", file));
      }
    }
    await rm(file, { force: true });
    const digest = new Set(ours.map((r) => r.digest));
    if (digest.size !== 1) {
      failed = true;
      console.log(`  ${shape.name}: runs disagree on the summary (${[...digest].join(", ")})`);
    }
    if (shape.sameAs) {
      const seen = digests.get(shape.sameAs);
      if (seen === undefined) digests.set(shape.sameAs, ours[0].digest);
      else if (seen !== ours[0].digest) {
        failed = true;
        console.log(`  ${shape.name}: summary differs from the same rows in another order`);
      }
    }
    const ourSeconds = median(ours.map((r) => r.seconds));
    const duckSeconds = median(duck.map((r) => r.seconds));
    const rss = Math.max(...ours.map((r) => r.maxRssMb));
    const row = {
      shape: shape.name,
      mb: Number((bytes / 1e6).toFixed(0)),
      rows: ours[0].rows,
      ours_s: Number(ourSeconds.toFixed(2)),
      ours_runs_s: ours.map((r) => Number(r.seconds.toFixed(2))),
      duckdb_s: Number(duckSeconds.toFixed(2)),
      duckdb_runs_s: duck.map((r) => Number(r.seconds.toFixed(2))),
      ratio: Number((ourSeconds / duckSeconds).toFixed(2)),
      // CPU seconds (all threads, the process's whole life): what a loaded machine changes least.
      ours_cpu_s: Number(median(ours.map((r) => r.cpuSeconds)).toFixed(2)),
      duckdb_cpu_s: Number(median(duck.map((r) => r.cpuSeconds)).toFixed(2)),
      ours_peak_rss_mb: Number(rss.toFixed(0)),
      duckdb_peak_rss_mb: Number(Math.max(...duck.map((r) => r.maxRssMb)).toFixed(0)),
      load_before: before,
      load_after: load(),
    };
    lines.push(row);
    console.log(
      `${shape.name.padEnd(40)} ${String(row.mb).padStart(4)} MB  ours ${row.ours_s.toFixed(2)} s  DuckDB ${row.duckdb_s.toFixed(2)} s  ratio ${row.ratio.toFixed(2)} (${row.ratio <= 0.67 ? "met" : "NOT met"})  CPU ${row.ours_cpu_s.toFixed(1)} / ${row.duckdb_cpu_s.toFixed(1)} s  peak RSS ${row.ours_peak_rss_mb} MB (${rss <= 160 ? "met" : "NOT met"})  load ${before} / ${row.load_after}`,
    );
  }
  const identical = [...digests.keys()].length > 0 && !failed;
  console.log(
    `summary identical across row orders: ${identical ? "yes" : "NO"}; targets: ratio <= 0.67 on ${lines.filter((l) => l.ratio <= 0.67).length} of ${lines.length} shapes, peak RSS <= 160 MB on ${lines.filter((l) => l.ours_peak_rss_mb <= 160).length} of ${lines.length}`,
  );
  for (const row of lines) console.log(JSON.stringify(row));
} finally {
  await rm(workDir, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
