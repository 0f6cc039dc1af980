import { open } from "node:fs/promises";
import { writeInTimeOrder } from "./csv-order.js";
import { type CsvShape, customerIdSpeller, platformIdSpeller } from "./csv-shape.js";
import { CsvSink } from "./csv-sink.js";
import { CSV_COLUMNS } from "./spec.js";
import { DAY_MS, dayToDate } from "./world/time.js";
import type { CampaignRow, SandboxRound, SandboxTask, World } from "./world/types.js";

/**
 * Streams the campaign CSV of spec 2.4 to a file: UTF-8 without BOM, the 13 columns in order,
 * RFC 4180 quoting, CRLF record ends (RFC 4180; a line break inside a quoted error message stays
 * as the carrier wrote it), times as `YYYY-MM-DD HH:mm:ss` in the application's zone.
 *
 * Rows come from `world.roundRows()` one at a time and leave in 1 MiB chunks (csv-sink.ts), so
 * memory stays bounded whatever the export size; other row orders: csv-order.ts.
 */

export interface SelectedRound {
  task: SandboxTask;
  round: SandboxRound;
}

const EOL = "\r\n";
const NEEDS_QUOTES = /[",\r\n]/;
const TWO_DIGITS = Array.from({ length: 60 }, (_, n) => String(n).padStart(2, "0"));

/** RFC 4180: quote a field containing a comma, quote, CR or LF, doubling the quotes inside. */
export function csvField(value: string): string {
  return NEEDS_QUOTES.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/**
 * A formatter for a zone with a fixed offset (Asia/Seoul has had no DST since 1988): the date
 * part is cached per day, the time part is built from a table, no Date or Intl per row.
 */
export function createTimeFormatter(offsetMinutes: number): (epochMs: number) => string {
  const offsetMs = offsetMinutes * 60_000;
  const dates = new Map<number, string>();
  return (epochMs: number): string => {
    const local = epochMs + offsetMs;
    const day = Math.floor(local / DAY_MS);
    let date = dates.get(day);
    if (date === undefined) {
      date = `${dayToDate(day)} `;
      if (dates.size > 4096) dates.clear();
      dates.set(day, date);
    }
    let seconds = Math.floor((local - day * DAY_MS) / 1000);
    const hours = Math.floor(seconds / 3600);
    seconds -= hours * 3600;
    const minutes = Math.floor(seconds / 60);
    seconds -= minutes * 60;
    return `${date}${TWO_DIGITS[hours]}:${TWO_DIGITS[minutes]}:${TWO_DIGITS[seconds]}`;
  };
}

/** One row as a CSV line; `user`/`platformUser` are the ID columns as they are to be written. */
export function formatRow(
  row: CampaignRow,
  time: (ms: number) => string,
  scheduled: string,
  user: string,
  platformUser: string,
): string {
  return (
    `${csvField(row.task_id)},${scheduled},${csvField(row.group)},${csvField(row.event_type)},` +
    `${csvField(user)},${csvField(platformUser)},${time(row.captured_at)},` +
    `${csvField(row.channel)},${csvField(row.error_code)},${csvField(row.error_message)},` +
    `${csvField(row.event_properties)},${csvField(row.custom_event_properties)},` +
    `${csvField(row.internal_event_properties)}${EOL}`
  );
}

export interface CsvWriteResult {
  bytes: number;
  rows: number;
}

/**
 * Writes the rounds' rows to `path` (created or truncated) in the given shape (csv-shape.ts; by
 * default the sandbox's own); stops with an error when aborted.
 */
export async function writeCampaignCsv(
  world: Pick<World, "roundRows">,
  rounds: readonly SelectedRound[],
  path: string,
  offsetMinutes: number,
  signal?: AbortSignal,
  shape: CsvShape = {},
): Promise<CsvWriteResult> {
  const file = await open(path, "w");
  const sink = new CsvSink(file, signal);
  const time = createTimeFormatter(offsetMinutes);
  const lineOf = lineFormatter(time, shape);
  let rows = 0;
  try {
    await sink.put(`${CSV_COLUMNS.join(",")}${EOL}`);
    const order = shape.order ?? "rounds";
    if (order === "rounds") {
      for (const { task, round } of rounds) {
        for (const row of world.roundRows(task, round)) {
          const line = lineOf(row);
          rows += 1;
          if (!sink.tryPut(line)) await sink.put(line);
        }
      }
    } else {
      rows = await writeInTimeOrder(world, rounds, sink, lineOf, order === "time-in-round");
    }
    await sink.finish();
  } finally {
    await sink.settle();
    await file.close();
  }
  return { bytes: sink.bytes, rows };
}

/** A row to its CSV line in the shape's ID spellings (scheduled_at formatted once per round). */
function lineFormatter(
  time: (ms: number) => string,
  shape: CsvShape,
): (row: CampaignRow) => string {
  const user = customerIdSpeller(shape.customerIds);
  const platformUser = platformIdSpeller(shape.platformIds);
  let scheduledMs = Number.NaN;
  let scheduled = "";
  return (row) => {
    if (row.scheduled_at !== scheduledMs) {
      scheduledMs = row.scheduled_at;
      scheduled = time(scheduledMs);
    }
    return formatRow(row, time, scheduled, user(row.user_id), platformUser(row.platform_user_id));
  };
}
