#!/usr/bin/env node
/**
 * Benchmark of the campaign summary on export shapes we did not tune on, side by side with DuckDB
 * (2 threads, the same core aggregates) from the same run (run after `npm run build`). Every
 * file is written by the sandbox's CSV writer (src/sandbox/csv-shape.ts), from the huge campaign
 * as an A/B test with a control group (`hugeAbTest`):
 * - about 1,000,000 sends with 24-hex service IDs and e-mail-like customer IDs in three row
 *   orders: round by round (the sandbox's own), by event time within a task (A/B and control
 *   groups interleave) and by event time across the file (rounds interleave too); their
 *   summaries must be identical (the script fails otherwise);
 * - the sandbox's own IDs, groups interleaved; empty customer IDs, rounds interleaved;
 * - rounds not alike, written here (the sandbox's are): one round of 900,000 sends, then 119 of
 *   5,000 (with 999 of 600, beyond the service's 120 rounds, one build took 12.9 s and 1.9 GB);
 * - the most one job may hold: the longest run of rounds with at most 2,000,000 sends, by time.
 * Per shape: BENCH_RUNS (default 5: on a shared 2-core machine single runs spread by +-15%)
 * alternating fresh child processes of ours and DuckDB's; medians, their ratio (target: ours <=
 * 0.67 x DuckDB's) and our peak RSS (target <= 160 MB).
 * DuckDB's per-round counts, distinct users, failures per code and KRW revenue are checked against
 * ours on every file (the script fails when they differ), so both sides compute the same thing.
 * Then the largest realistic scenario export (60 message nodes, a year of days; the sandbox's
 * XLSX writer), summarized BENCH_RUNS times (target: well under a second).
 * The load average is printed per shape: on a shared machine the numbers move with it.
 * Files go to a temp folder deleted at the end; BENCH_FILES=DIR keeps them there and reuses
 * them in later runs (the 2,000,000-send file takes about a minute to write).
 * BENCH_SENDS=200000 scales the 1,000,000-send shapes; BENCH_SKIP_BIG=1 leaves the big file out;
 * BENCH_SCENARIO_ONLY=1 measures only the scenario export; BENCH_ONLY=TEXT only the shapes whose
 * name holds TEXT (and the scenario export).
 * Before and after a change: BENCH_BASE_DIST=DIR (another build's dist/, e.g. of a git worktree
 * of the code before it) summarizes every file too, its runs alternating with ours in the same
 * run; its medians of wall and CPU time and ours over them are printed. Its core figures must
 * equal ours (the script fails otherwise); whether the whole summaries are equal is printed (a
 * change may rename a field on purpose). BENCH_DUCKDB=0 leaves DuckDB out.
 */
import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, mkdtemp, rename, rm, stat } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { exists, load, median, runChild } from "./lib/measure.mjs";

const here = fileURLToPath(new URL(".", import.meta.url));
// Resolved against the working folder: a relative path would be taken from bench/ by import().
const dist = resolve(process.env.BENCH_DIST ?? join(here, "..", "dist"));
const NOW = "2024-06-15T03:00:00Z";
const SEED = 42;

/** The core figures both sides compute, as sorted lines (compared across the two). */
function coreLines(rounds, codes, krw) {
  return [
    ...rounds.map((r) => r.join("|")).sort(),
    ...codes.map((c) => `code ${c.join("|")}`).sort(),
    `krw ${Math.round(krw)}`,
  ];
}
const digestOf = (value) =>
  createHash("sha256").update(JSON.stringify(value)).digest("hex").slice(0, 16);
function usage() {
  const u = process.resourceUsage();
  return { cpuSeconds: (u.userCPUTime + u.systemCPUTime) / 1e6, maxRssMb: u.maxRSS / 1024 };
}

if (process.argv[2] === "--ours") {
  // Child: our summary of one file; time, peak RSS, a digest of the result without its path and
  // of its core figures.
  const { summarizeFile } = await import(join(dist, "analysis", "index.js"));
  const before = usage();
  const started = performance.now();
  const result = await summarizeFile(process.argv[3]);
  const seconds = (performance.now() - started) / 1000;
  const summaryCpuSeconds = usage().cpuSeconds - before.cpuSeconds;
  const { file: _file, ...figures } = result;
  const core =
    result.kind === "campaign_event_data"
      ? coreLines(
          result.rounds.map((r) => [
            r.task_id,
            r.scheduled_at,
            r.group,
            r.sent,
            r.received,
            r.failed,
            r.control_assigned,
            r.opens,
            r.conversions,
            r.received_users,
            r.open_users,
          ]),
          result.error_codes.map((c) => [c.error_code, c.count]),
          result.revenue.by_currency.find((c) => c.currency === "KRW")?.amount ?? 0,
        )
      : [];
  process.stdout.write(
    JSON.stringify({
      seconds,
      ...usage(),
      summaryCpuSeconds,
      rows: result.rows ?? result.nodes?.length,
      digest: digestOf(figures),
      core: digestOf(core),
    }),
  );
  process.exit(0);
}

if (process.argv[2] === "--duckdb") {
  // Child: DuckDB on 2 threads, the core aggregates of the summary in one scan: per round and
  // group, counts by event role, distinct receiving and opening users, KRW revenue; per error
  // code, failures (GROUPING SETS).
  const { DuckDBInstance } = await import("@duckdb/node-api");
  const started = performance.now();
  const instance = await DuckDBInstance.create(":memory:", { threads: "2" });
  const con = await instance.connect();
  const file = process.argv[3].replaceAll("'", "''");
  const user = "coalesce(nullif(platform_user_id, ''), user_id)";
  const opened = "event_type LIKE '%\\_opened' ESCAPE '\\'";
  const reader = await con.runAndReadAll(`
    SELECT task_id, scheduled_at, "group", error_code, GROUPING(error_code) AS per_round,
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
  const rows = reader.getRowObjects();
  const seconds = (performance.now() - started) / 1000;
  const n = (v) => Number(v ?? 0);
  const perRound = rows.filter((r) => n(r.per_round) === 1);
  const core = coreLines(
    perRound.map((r) => [
      r.task_id,
      r.scheduled_at,
      r.group ?? "",
      n(r.sent),
      n(r.received),
      n(r.failed),
      n(r.control),
      n(r.opens),
      n(r.conversions),
      n(r.received_users),
      n(r.open_users),
    ]),
    rows
      .filter((r) => n(r.per_round) === 0 && n(r.failed) > 0)
      .map((r) => [r.error_code, n(r.failed)]),
    perRound.reduce((sum, r) => sum + n(r.krw), 0),
  );
  process.stdout.write(JSON.stringify({ seconds, ...usage(), core: digestOf(core) }));
  process.exit(0);
}

const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 5));
const BASE_DIST = process.env.BENCH_BASE_DIST && resolve(process.env.BENCH_BASE_DIST);
const WITH_DUCKDB = process.env.BENCH_DUCKDB !== "0";
const SENDS = Math.max(1000, Number(process.env.BENCH_SENDS ?? 1_000_000));
const MAX_SENDS = 2_000_000;
const hexMail = { platformIds: "hex24", customerIds: "email" };
const SHAPES = [
  { name: "rounds, 24-hex ids", sends: SENDS, shape: { order: "rounds", ...hexMail }, sameAs: "A" },
  {
    name: "groups interleaved",
    sends: SENDS,
    shape: { order: "time-in-round", ...hexMail },
    sameAs: "A",
  },
  { name: "rounds interleaved", sends: SENDS, shape: { order: "time", ...hexMail }, sameAs: "A" },
  { name: "sandbox ids, groups interleaved", sends: SENDS, shape: { order: "time-in-round" } },
  {
    name: "empty customer ids, rounds interleaved",
    sends: SENDS,
    shape: { order: "time", platformIds: "hex24", customerIds: "empty" },
  },
  // Not the sandbox's rounds, which are alike: one large send, then 119 small follow-ups.
  { name: "one large round, 119 small", sends: SENDS, uneven: true },
  ...(process.env.BENCH_SKIP_BIG === "1"
    ? []
    : [
        {
          name: "max job, rounds interleaved",
          sends: MAX_SENDS,
          shape: { order: "time", ...hexMail },
        },
      ]),
];

/** One child process: `--ours` (the summary of the build in `fromDist`) or `--duckdb`. */
function child(kind, file, fromDist = dist) {
  return runChild(fileURLToPath(import.meta.url), [kind, file], {
    env: { ...process.env, BENCH_DIST: fromDist },
  });
}

/**
 * Runs each side once per round, RUNS rounds, in turns: in this order on even rounds and the
 * reverse on odd ones, so a change in the machine's load falls on every side alike.
 */
function alternate(sides) {
  for (let i = 0; i < RUNS; i++) {
    for (const run of i % 2 === 0 ? sides : [...sides].reverse()) run();
  }
}

/** Medians of one side's wall time (and its runs) and CPU time (`cpu`: which CPU figure). */
function timings(side, runs, cpu) {
  return {
    [`${side}_s`]: Number(median(runs.map((r) => r.seconds)).toFixed(2)),
    [`${side}_runs_s`]: runs.map((r) => Number(r.seconds.toFixed(2))),
    [`${side}_cpu_s`]: Number(median(runs.map((r) => r[cpu])).toFixed(2)),
    [`${side}_runs_cpu_s`]: runs.map((r) => Number(r[cpu].toFixed(2))),
  };
}

/** The base build's medians and ours over them, wall and CPU time (above 1: ours is slower). */
function againstBase(ours, base, cpu) {
  const wall = (runs) => median(runs.map((r) => r.seconds));
  const cpuOf = (runs) => median(runs.map((r) => r[cpu]));
  return {
    ...timings("base", base, cpu),
    vs_base: Number((wall(ours) / wall(base)).toFixed(3)),
    // Run i of ours and of the base ran next to each other (see alternate).
    vs_base_paired: Number(median(ours.map((r, i) => r.seconds / base[i].seconds)).toFixed(3)),
    vs_base_cpu: Number((cpuOf(ours) / cpuOf(base)).toFixed(3)),
    same_summary_as_base: base.every((r) => r.digest === ours[0].digest),
  };
}

function baseText(row) {
  return `base ${row.base_s.toFixed(2)} s, CPU ${row.base_cpu_s.toFixed(2)} s: ours/base ${row.vs_base.toFixed(3)} (paired ${row.vs_base_paired.toFixed(3)}), CPU ${row.vs_base_cpu.toFixed(3)}`;
}

/** DuckDB's medians beside ours (its runs alternated with ours). */
function againstDuckDb(ours, duck) {
  const ourSeconds = median(ours.map((r) => r.seconds));
  const duckSeconds = median(duck.map((r) => r.seconds));
  return {
    duckdb_s: Number(duckSeconds.toFixed(2)),
    duckdb_runs_s: duck.map((r) => Number(r.seconds.toFixed(2))),
    ratio: Number((ourSeconds / duckSeconds).toFixed(2)),
    // The median of each run's ratio (ours and DuckDB's run side by side): when the machine
    // slows down for a while, both runs of a pair share it; the ratio of medians may not.
    paired_ratio: Number(median(ours.map((r, i) => r.seconds / duck[i].seconds)).toFixed(2)),
    duckdb_cpu_s: Number(median(duck.map((r) => r.cpuSeconds)).toFixed(2)),
    duckdb_peak_rss_mb: Number(Math.max(...duck.map((r) => r.maxRssMb)).toFixed(0)),
    same_core_figures: ours[0].core === duck[0].core,
  };
}

/** A repeatable stream of 32-bit words (a linear congruential generator): the files' contents. */
function words(seed) {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state;
  };
}

/** The huge campaign's first rounds holding at most `sends` sends (the sandbox's selection). */
function roundsUpTo(world, sends) {
  const huge = world.campaigns.find((c) => c.role === "huge_sends");
  const selected = [];
  let total = 0;
  const tasks = huge.tasks.filter((t) => t.aggregated);
  const sendsOf = (task) => task.rounds.reduce((n, r) => (r.isControl ? n : n + r.records), 0);
  for (const task of tasks) {
    const add = sendsOf(task);
    if (total + add > sends) break;
    total += add;
    for (const round of task.rounds) selected.push({ task, round });
  }
  if (selected.length === 0) {
    // Measuring an empty file would print times that mean nothing.
    throw new Error(
      `BENCH_SENDS=${sends} is below the sandbox's first task (${sendsOf(tasks[0])} sends): ask for more.`,
    );
  }
  return { rounds: selected, sends: total };
}

/** The campaign CSV of `sends` sends in `shape`, written once into `dir` (kept if BENCH_FILES). */
async function campaignFile(dir, world, sends, shape) {
  const name = `campaign-s${SEED}-${sends}-${shape.order}-${shape.platformIds ?? "sandbox"}-${shape.customerIds ?? "sandbox"}.csv`;
  const path = join(dir, name);
  const picked = roundsUpTo(world, sends);
  if (!(await exists(path))) {
    const { writeCampaignCsv } = await import(join(dist, "sandbox", "csv-writer.js"));
    const started = performance.now();
    await writeCampaignCsv(world, picked.rounds, `${path}.part`, 540, undefined, shape);
    await rename(`${path}.part`, path);
    console.log(
      `  (wrote ${name}: ${((performance.now() - started) / 1000).toFixed(1)} s, peak RSS of the writer so far ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB)`,
    );
  }
  return { path, sends: picked.sends, rounds: picked.rounds.length };
}

/**
 * A campaign CSV whose rounds are not alike: one round of 90% of `sends`, then 119 rounds of
 * 5,000 sends each (two groups taking turns; 120 rounds is the most a service export holds),
 * written here rather than by the sandbox (whose rounds are all alike); 24-hex service IDs and
 * e-mail-like customer IDs, 5% failures, 30% opens, 3% KRW purchases. Every round's rows
 * together, the large round first.
 */
async function unevenFile(dir, sends) {
  const path = join(dir, `campaign-uneven-${sends}-120-rounds.csv`);
  const small = 119;
  const perSmall = 5000;
  const made = { path, sends: Math.floor(sends * 0.9) + small * perSmall, rounds: 1 + small };
  if (await exists(path)) return made;
  const { CAMPAIGN_CSV_COLUMNS } = await import(join(dist, "api", "csv-columns.js"));
  const next = words(11);
  const hex = () => [next(), next(), next()].map((w) => w.toString(16).padStart(8, "0")).join("");
  const out = createWriteStream(`${path}.part`);
  const write = (text) =>
    out.write(text) ? undefined : new Promise((resolve) => out.once("drain", resolve));
  await write(`${CAMPAIGN_CSV_COLUMNS.join(",")}\n`);
  const round = async (task, scheduled, group, count) => {
    let lines = [];
    for (let i = 0; i < count; i++) {
      const row = (event, extra = ",,{}") =>
        `${task},${scheduled},${group},${event},m${next()}@example.com,${hex()},${scheduled},app_push,${extra},{},{}`;
      const r = next() / 2 ** 32;
      lines.push(row("message_sent"));
      if (r < 0.05) lines.push(row("message_failed", `E${Math.floor(r * 100)},quota,{}`));
      else {
        lines.push(row("message_received"));
        if (r < 0.35) lines.push(row("push_opened"));
        if (r < 0.08)
          lines.push(row("purchase", ',,"{""revenue"": 12000, ""currency"": ""KRW""}"'));
      }
      if (lines.length >= 4096) {
        await write(`${lines.join("\n")}\n`);
        lines = [];
      }
    }
    if (lines.length > 0) await write(`${lines.join("\n")}\n`);
  };
  await round("tsk_large", "2024-05-01 12:00:00", "그룹A", Math.floor(sends * 0.9));
  for (let k = 0; k < small; k++) {
    const day = `2024-06-${String(1 + (k % 28)).padStart(2, "0")}`;
    const time = `${String(k % 24).padStart(2, "0")}:${String(k % 60).padStart(2, "0")}:00`;
    await round(`tsk_small_${k}`, `${day} ${time}`, k % 2 === 0 ? "그룹A" : "그룹B", perSmall);
  }
  await new Promise((resolve, reject) => out.end((error) => (error ? reject(error) : resolve())));
  await rename(`${path}.part`, path);
  return made;
}

/** A scenario export of `nodes` message nodes over `days` days, by the sandbox's XLSX writer. */
async function scenarioFile(dir, nodes, days) {
  const path = join(dir, `scenario-v2-${nodes}-nodes-${days}-days.xlsx`);
  if (await exists(path)) return path;
  const { writeScenarioXlsx } = await import(join(dist, "sandbox", "xlsx-writer.js"));
  const { SCENARIO_METRIC_COLUMNS } = await import(join(dist, "api", "schemas.js"));
  const channels = ["앱푸시", "알림톡", "친구톡", "브랜드 메시지", "SMS", "RCS", "이메일"];
  const branches = ["", "A", "B", "B·A", "B·B"];
  const first = Date.parse("2023-06-15T00:00:00Z");
  const word = words(7);
  const next = () => word() / 2 ** 32;
  // Counts and ratios as the sandbox derives them (ratios recomputed, long decimals in the XML).
  const metrics = (volume) => {
    const sends = Math.max(1, Math.round(volume * (0.6 + 0.8 * next())));
    const sendUsers = sends - Math.floor(sends * 0.04 * next());
    const opens = Math.round(sends * 0.3 * (0.6 + 0.8 * next()));
    const openUsers = Math.round(opens * (0.75 + 0.2 * next()));
    const conversions = Math.round(openUsers * 0.18 * (0.4 + 1.2 * next()));
    const conversionUsers = conversions - Math.floor(conversions * 0.15 * next());
    const revenue = conversions * Math.round(30_000 * (0.3 + 1.4 * next()));
    const cost = sends * 13;
    const div = (a, b) => (b === 0 ? 0 : a / b);
    const values = [
      sends,
      sendUsers,
      opens,
      openUsers,
      div(opens, sends),
      div(openUsers, sendUsers),
    ];
    values.push(
      conversions,
      conversionUsers,
      div(conversions, opens),
      div(conversionUsers, openUsers),
    );
    values.push(
      revenue,
      cost,
      div(revenue, cost),
      div(revenue, conversions),
      div(cost, conversions),
    );
    return Object.fromEntries(SCENARIO_METRIC_COLUMNS.map((column, i) => [column, values[i]]));
  };
  const reports = Array.from({ length: nodes }, (_, n) => {
    const volume = 50 + Math.floor(next() * 5000);
    const dayRows = Array.from({ length: days }, (_, d) => ({
      date: new Date(first + d * 86_400_000).toISOString().slice(0, 10),
      metrics: metrics(volume),
    }));
    return {
      node: {
        number: n + 1,
        channel: channels[n % channels.length],
        branch: branches[n % branches.length],
        node_id: `node_${(n * 2654435761) >>> 0}`.padEnd(24, "0"),
      },
      summary: metrics(volume * days),
      days: dayRows,
    };
  });
  await writeScenarioXlsx(reports, path, {
    fromDate: reports[0].days[0].date,
    toDate: reports[0].days.at(-1).date,
  });
  return path;
}

const keep = process.env.BENCH_FILES;
const workDir = keep ?? (await mkdtemp(join(tmpdir(), "shapes-bench-")));
if (keep) await mkdir(keep, { recursive: true });
const lines = [];
const digests = new Map();
let failed = false;
try {
  const { createWorld } = await import(join(dist, "sandbox", "world", "index.js"));
  const world = createWorld({ seed: SEED, now: Date.parse(NOW), hugeAbTest: true });
  console.log(
    `${RUNS} runs per shape on ${cpus().length} CPUs; medians; load average before / after`,
  );
  const only = process.env.BENCH_ONLY;
  const shapes = SHAPES.filter((s) => only === undefined || s.name.includes(only));
  if (shapes.length === 0) {
    throw new Error(
      `BENCH_ONLY=${only} names no shape; shapes: ${SHAPES.map((s) => s.name).join("; ")}.`,
    );
  }
  for (const shape of process.env.BENCH_SCENARIO_ONLY === "1" ? [] : shapes) {
    const made = shape.uneven
      ? await unevenFile(workDir, shape.sends)
      : await campaignFile(workDir, world, shape.sends, shape.shape);
    const bytes = (await stat(made.path)).size;
    const before = load();
    const ours = [];
    const base = [];
    const duck = [];
    alternate([
      () => ours.push(child("--ours", made.path)),
      ...(BASE_DIST ? [() => base.push(child("--ours", made.path, BASE_DIST))] : []),
      ...(WITH_DUCKDB ? [() => duck.push(child("--duckdb", made.path))] : []),
    ]);
    const problems = [];
    if (new Set(ours.map((r) => r.digest)).size !== 1) problems.push("our runs disagree");
    if (WITH_DUCKDB && ours[0].core !== duck[0].core) {
      problems.push("ours and DuckDB's core figures differ");
    }
    if (BASE_DIST && base.some((r) => r.core !== ours[0].core)) {
      problems.push("core figures differ from the base build's");
    } else if (BASE_DIST && base.some((r) => r.digest !== ours[0].digest)) {
      console.log(
        `  ${shape.name}: summary not identical to the base build's (core figures equal)`,
      );
    }
    if (shape.sameAs) {
      const seen = digests.get(shape.sameAs);
      if (seen === undefined) digests.set(shape.sameAs, ours[0].digest);
      else if (seen !== ours[0].digest) problems.push("summary differs from another row order");
    }
    if (problems.length > 0) {
      failed = true;
      console.log(`  ${shape.name}: ${problems.join("; ")}`);
    }
    const rss = Math.max(...ours.map((r) => r.maxRssMb));
    const row = {
      shape: shape.name,
      sends: made.sends,
      rounds: made.rounds,
      mb: Number((bytes / 1e6).toFixed(0)),
      rows: ours[0].rows,
      // CPU seconds (all threads, the process's whole life): what a loaded machine changes least.
      ...timings("ours", ours, "cpuSeconds"),
      ours_peak_rss_mb: Number(rss.toFixed(0)),
      ...(BASE_DIST ? againstBase(ours, base, "cpuSeconds") : {}),
      ...(WITH_DUCKDB ? againstDuckDb(ours, duck) : {}),
      load_before: before,
      load_after: load(),
    };
    lines.push(row);
    const parts = [
      `${shape.name.padEnd(40)} ${String(row.mb).padStart(4)} MB ${String(made.sends).padStart(9)} sends  ours ${row.ours_s.toFixed(2)} s`,
    ];
    if (WITH_DUCKDB) {
      parts.push(
        `DuckDB ${row.duckdb_s.toFixed(2)} s  ratio ${row.ratio.toFixed(2)} (${row.ratio <= 0.67 ? "met" : "NOT met"}; paired ${row.paired_ratio.toFixed(2)})  CPU ${row.ours_cpu_s.toFixed(1)} / ${row.duckdb_cpu_s.toFixed(1)} s`,
      );
    } else parts.push(`CPU ${row.ours_cpu_s.toFixed(2)} s`);
    if (BASE_DIST) parts.push(baseText(row));
    parts.push(
      `peak RSS ${row.ours_peak_rss_mb} MB (${rss <= 160 ? "met" : "NOT met"})  load ${before} / ${row.load_after}`,
    );
    console.log(parts.join("  "));
  }
  // With BENCH_ONLY, no two row orders of one file may have run: then only DuckDB's figures count.
  const orders = shapes.some((s) => s.sameAs) ? "summary identical across row orders and " : "";
  const campaignRows = lines.filter((l) => l.sends !== undefined);
  if (campaignRows.length > 0) {
    const checks = [
      ...(WITH_DUCKDB ? ["core figures equal to DuckDB's"] : []),
      ...(BASE_DIST ? ["core figures equal to the base build's"] : []),
    ];
    const ratios = WITH_DUCKDB
      ? `ratio <= 0.67 on ${campaignRows.filter((l) => l.ratio <= 0.67).length} of ${campaignRows.length} shapes, `
      : "";
    const withinBase = BASE_DIST
      ? `within 5% of the base build on ${campaignRows.filter((l) => l.vs_base <= 1.05).length} of ${campaignRows.length} shapes (wall), ${campaignRows.filter((l) => l.vs_base_cpu <= 1.05).length} (CPU), `
      : "";
    console.log(
      `${orders}${checks.join(" and ")}: ${failed ? "NO" : "yes"}; targets: ${ratios}${withinBase}peak RSS <= 160 MB on ${campaignRows.filter((l) => l.ours_peak_rss_mb <= 160).length} of ${campaignRows.length}`,
    );
  }

  const scenario = await scenarioFile(workDir, 60, 366);
  const runs = [];
  const baseRuns = [];
  alternate([
    () => runs.push(child("--ours", scenario)),
    ...(BASE_DIST ? [() => baseRuns.push(child("--ours", scenario, BASE_DIST))] : []),
  ]);
  if (BASE_DIST && baseRuns.some((r) => r.digest !== runs[0].digest)) {
    console.log("  scenario XLSX: summary not identical to the base build's");
  }
  const scenarioRow = {
    shape: "scenario XLSX, 60 nodes x 366 days",
    mb: Number(((await stat(scenario)).size / 1e6).toFixed(1)),
    nodes: runs[0].rows,
    // CPU seconds of the summary call alone: what a loaded machine changes least.
    ...timings("ours", runs, "summaryCpuSeconds"),
    ours_peak_rss_mb: Number(Math.max(...runs.map((r) => r.maxRssMb)).toFixed(0)),
    ...(BASE_DIST ? againstBase(runs, baseRuns, "summaryCpuSeconds") : {}),
  };
  lines.push(scenarioRow);
  console.log(
    `${scenarioRow.shape.padEnd(40)} ${scenarioRow.mb} MB  ours ${scenarioRow.ours_s.toFixed(2)} s (runs ${scenarioRow.ours_runs_s.join(", ")}; CPU ${scenarioRow.ours_cpu_s.toFixed(2)} s)${BASE_DIST ? `  ${baseText(scenarioRow)}` : ""}  peak RSS ${scenarioRow.ours_peak_rss_mb} MB  load ${load()}`,
  );
  for (const row of lines) console.log(JSON.stringify(row));
} finally {
  if (!keep) await rm(workDir, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
