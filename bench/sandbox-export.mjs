// Benchmark (not a test): export ~1.1M sends of the sandbox's huge campaign through the real HTTP
// flow (create, poll, completed) and report CSV throughput and peak memory.
// Usage: npm run build && node bench/sandbox-export.mjs
// Exits 1 when below 50 MB/s or above 300 MB peak RSS. The last stdout line is a JSON summary.
import { startSandbox } from "../dist/sandbox/index.js";

const MIN_MB_PER_S = 50;
const MAX_RSS_MB = 300;
const ROUNDS = 10;

const sandbox = await startSandbox({ now: "2024-06-15T03:00:00Z", jobSeconds: 0 });
try {
  const huge = sandbox.world.campaigns.find((c) => c.role === "huge_sends");
  if (huge === undefined) throw new Error("the world has no huge_sends campaign");
  const tasks = huge.tasks.filter((t) => t.aggregated).slice(0, ROUNDS);
  const kstDate = (ms) => new Date(ms + 9 * 3_600_000).toISOString().slice(0, 10);
  const from = kstDate(tasks[0].scheduled_at);
  const to = kstDate(tasks[tasks.length - 1].scheduled_at);
  const sends = tasks.reduce(
    (n, t) => n + t.rounds.reduce((m, r) => m + (r.isControl ? 0 : r.records), 0),
    0,
  );

  const app = `${sandbox.base_url}/prod/v2/applications/${sandbox.application_id}`;
  const headers = { Authorization: sandbox.secret_key, "Content-Type": "application/json" };
  const started = performance.now();
  const created = await fetch(`${app}/export-jobs`, {
    method: "POST",
    headers,
    body: JSON.stringify({ type: "campaign_event_data", campaign_id: huge._id, from, to }),
  });
  const job = await created.json();
  if (created.status !== 200)
    throw new Error(`create failed: ${created.status} ${JSON.stringify(job)}`);
  let done;
  while (true) {
    const res = await fetch(`${app}/export-jobs/${job._id}`, { headers });
    done = await res.json();
    if (done.status === "completed" || done.status === "failed") break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const seconds = (performance.now() - started) / 1000;
  if (done.status !== "completed") throw new Error(`job ${done.status}`);
  const mb = done.file_size / 1e6;
  const mbPerS = mb / seconds;
  const peakRssMb = process.resourceUsage().maxRSS / 1024;
  process.stderr.write(
    `exported ${sends.toLocaleString()} sends (${tasks.length} rounds, ${from}..${to}): ` +
      `${mb.toFixed(1)} MB in ${seconds.toFixed(2)} s = ${mbPerS.toFixed(1)} MB/s, peak RSS ${peakRssMb.toFixed(0)} MB\n`,
  );
  const ok = mbPerS >= MIN_MB_PER_S && peakRssMb <= MAX_RSS_MB;
  console.log(
    JSON.stringify({
      bench: "sandbox-export",
      sends,
      rounds: tasks.length,
      bytes: done.file_size,
      seconds: Number(seconds.toFixed(3)),
      mb_per_s: Number(mbPerS.toFixed(1)),
      peak_rss_mb: Number(peakRssMb.toFixed(1)),
      ok,
    }),
  );
  process.exitCode = ok ? 0 : 1;
} finally {
  await sandbox.close();
}
