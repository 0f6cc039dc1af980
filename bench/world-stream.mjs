// Benchmark (not a test): stream the rows of the sandbox world's largest round (~110,000 sends,
// ~240,000 rows) the way the CSV export does, and report rows/s and heap growth. Retaining the
// row objects would take well over 60 MB, so the heap must stay under MAX_HEAP_GROWTH_MB.
// Usage: npm run build && node --expose-gc bench/world-stream.mjs (gc is optional; it steadies the
// baseline). Exits 1 when the heap grows past the limit. The last stdout line is a JSON summary.
import { createWorld } from "../dist/sandbox/world/index.js";

const MAX_HEAP_GROWTH_MB = 48;

const world = createWorld({ seed: 42, now: Date.parse("2026-11-20T03:00:00Z") });
const huge = world.campaigns.find((c) => c.role === "huge_sends");
if (huge === undefined) throw new Error("the world has no huge_sends campaign");
const task = huge.tasks[huge.tasks.length - 1];
const round = task.rounds[0];
if (round === undefined) throw new Error("the huge campaign's last task has no round");

globalThis.gc?.();
const before = process.memoryUsage().heapUsed;
let peak = before;
let rows = 0;
let sent = 0;
const started = performance.now();
for (const row of world.roundRows(task, round)) {
  rows++;
  if (row.event_type === "message_sent") sent++;
  if ((rows & 0x3fff) === 0) peak = Math.max(peak, process.memoryUsage().heapUsed);
}
const seconds = (performance.now() - started) / 1000;
if (sent !== round.records)
  throw new Error(`streamed ${sent} sends, the round has ${round.records}`);
const growthMb = (peak - before) / 1048576;
process.stderr.write(
  `huge round: ${rows} rows in ${seconds.toFixed(3)} s = ${Math.round(rows / seconds)} rows/s, peak heap growth ${growthMb.toFixed(1)} MB (limit ${MAX_HEAP_GROWTH_MB})\n`,
);
const ok = growthMb < MAX_HEAP_GROWTH_MB;
console.log(
  JSON.stringify({
    bench: "world-stream",
    rows,
    sends: sent,
    seconds: Number(seconds.toFixed(3)),
    rows_per_s: Math.round(rows / seconds),
    heap_growth_mb: Number(growthMb.toFixed(1)),
    ok,
  }),
);
process.exitCode = ok ? 0 : 1;
