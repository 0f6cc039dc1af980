import type { CsvSink } from "./csv-sink.js";
import type { SelectedRound } from "./csv-writer.js";
import type { CampaignRow, World } from "./world/types.js";

/**
 * A campaign export with its rows by event time (captured_at), within each task or across the
 * whole file, in bounded memory: rows are never stored, so they cannot simply be sorted.
 *
 * A first pass counts the rows per minute of event time (per task and minute for the order
 * within a task) and notes each round's first and last minute. The minutes are then cut into
 * windows of at most WINDOW_ROWS rows; for each window the rounds whose rows reach into it are
 * generated again, its rows are encoded into one growing arena, sorted by (key, generation order)
 * and written. A round is generated once per window it reaches (rounds of a daily campaign
 * overlap only their neighbours), and memory is one window's bytes.
 */

/** Rows per window: about 40-60 MB of encoded rows for the sandbox's rows. */
const WINDOW_ROWS = 350_000;
const MINUTE_MS = 60_000;
/** Room for every event time (ms) below the task index, so the key sorts task first. */
const TASK_SPAN = 1e13;

interface Window {
  /** keys in [from, to) */
  from: number;
  to: number;
  rows: number;
}

/** Cuts the minutes (sorted bucket -> rows) into windows of about `limit` rows. */
function windowsOf(buckets: Map<number, number>, limit: number): Window[] {
  const minutes = [...buckets.keys()].sort((a, b) => a - b);
  const windows: Window[] = [];
  let open: Window | undefined;
  for (const minute of minutes) {
    const rows = buckets.get(minute) as number;
    if (open === undefined || (open.rows > 0 && open.rows + rows > limit)) {
      open = { from: minute * MINUTE_MS, to: minute * MINUTE_MS, rows: 0 };
      windows.push(open);
    }
    open.rows += rows;
    open.to = (minute + 1) * MINUTE_MS;
  }
  return windows;
}

/** Bytes of encoded rows, appended; offsets are kept by the caller. */
class Arena {
  buf = Buffer.allocUnsafe(1 << 20);
  used = 0;

  append(text: string): void {
    if (this.used + text.length * 3 > this.buf.length) {
      const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.used + text.length * 3));
      this.buf.copy(bigger, 0, 0, this.used);
      this.buf = bigger;
    }
    this.used += this.buf.write(text, this.used, "utf8");
  }
}

/**
 * Writes the rows of `rounds` to `sink` by event time (`perTask`: within each task, tasks in
 * their order); rows with the same time keep the sandbox's order. Returns the rows written.
 */
export async function writeInTimeOrder(
  world: Pick<World, "roundRows">,
  rounds: readonly SelectedRound[],
  sink: CsvSink,
  lineOf: (row: CampaignRow) => string,
  perTask: boolean,
  /** rows per window (tests make it small, to cut the file into many) */
  windowRows = WINDOW_ROWS,
): Promise<number> {
  const taskIndex = new Map<string, number>();
  const keyBase = rounds.map(({ task }) => {
    if (!perTask) return 0;
    let index = taskIndex.get(task._id);
    if (index === undefined) {
      index = taskIndex.size;
      taskIndex.set(task._id, index);
    }
    return index * TASK_SPAN;
  });
  const buckets = new Map<number, number>();
  const first = new Float64Array(rounds.length).fill(Number.POSITIVE_INFINITY);
  const last = new Float64Array(rounds.length).fill(Number.NEGATIVE_INFINITY);
  let total = 0;
  for (const [r, { task, round }] of rounds.entries()) {
    const base = keyBase[r] as number;
    for (const row of world.roundRows(task, round)) {
      const key = base + row.captured_at;
      const minute = Math.floor(key / MINUTE_MS);
      buckets.set(minute, (buckets.get(minute) ?? 0) + 1);
      if (key < (first[r] as number)) first[r] = key;
      if (key > (last[r] as number)) last[r] = key;
      total++;
    }
    await sink.flush(); // only checks for an abort here: nothing is buffered yet
  }

  const arena = new Arena();
  let written = 0;
  for (const window of windowsOf(buckets, windowRows)) {
    arena.used = 0;
    const keys = new Float64Array(window.rows);
    const starts = new Int32Array(window.rows + 1);
    let n = 0;
    for (const [r, { task, round }] of rounds.entries()) {
      if ((last[r] as number) < window.from || (first[r] as number) >= window.to) continue;
      const base = keyBase[r] as number;
      for (const row of world.roundRows(task, round)) {
        const key = base + row.captured_at;
        if (key < window.from || key >= window.to) continue;
        keys[n] = key;
        starts[n] = arena.used;
        arena.append(lineOf(row));
        n++;
      }
    }
    if (n !== window.rows) throw new Error("the rows of a round changed between two passes");
    starts[n] = arena.used;
    const order = new Uint32Array(n);
    for (let i = 0; i < n; i++) order[i] = i;
    order.sort((a, b) => (keys[a] as number) - (keys[b] as number) || a - b);
    for (let i = 0; i < n; i++) {
      const at = order[i] as number;
      const line = arena.buf.subarray(starts[at], starts[at + 1]);
      if (!sink.tryPutBytes(line)) await sink.putBytes(line);
    }
    written += n;
  }
  if (written !== total) throw new Error("the rows of a round changed between two passes");
  return written;
}
