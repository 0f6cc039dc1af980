import { open } from "node:fs/promises";
import { CAMPAIGN_CSV_COLUMNS } from "../api/schemas.js";
import { DAY_MS, dayToDate } from "./world/time.js";
import type { CampaignRow, SandboxRound, SandboxTask, World } from "./world/types.js";

/**
 * Streams the campaign CSV of spec 2.4 to a file: UTF-8 without BOM, the 13 columns in order,
 * RFC 4180 quoting, CRLF record ends (RFC 4180; a line break inside a quoted error message stays
 * as the carrier wrote it), times as `YYYY-MM-DD HH:mm:ss` in the application's zone.
 *
 * Rows come from `world.roundRows()` one at a time and leave in 1 MiB chunks; at most one chunk
 * is being written while the next is filled, so memory stays bounded whatever the export size.
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

function formatRow(row: CampaignRow, time: (ms: number) => string, scheduled: string): string {
  return (
    `${csvField(row.task_id)},${scheduled},${csvField(row.group)},${csvField(row.event_type)},` +
    `${csvField(row.user_id)},${csvField(row.platform_user_id)},${time(row.captured_at)},` +
    `${csvField(row.channel)},${csvField(row.error_code)},${csvField(row.error_message)},` +
    `${csvField(row.event_properties)},${csvField(row.custom_event_properties)},` +
    `${csvField(row.internal_event_properties)}${EOL}`
  );
}

export interface CsvWriteResult {
  bytes: number;
  rows: number;
}

/** Two buffers: one is filled while the other is being written. */
const BUFFER_BYTES = 1 << 20;

/** Writes the rounds' rows to `path` (created or truncated); stops with an error when aborted. */
export async function writeCampaignCsv(
  world: Pick<World, "roundRows">,
  rounds: readonly SelectedRound[],
  path: string,
  offsetMinutes: number,
  signal?: AbortSignal,
): Promise<CsvWriteResult> {
  const file = await open(path, "w");
  const time = createTimeFormatter(offsetMinutes);
  const buffers = [Buffer.allocUnsafe(BUFFER_BYTES), Buffer.allocUnsafe(BUFFER_BYTES)];
  let current = 0;
  let buffer = buffers[0] as Buffer;
  let used = 0;
  let bytes = 0;
  let rows = 0;
  // Rows are encoded straight into a preallocated buffer: building one big string per chunk
  // made the garbage collector the bottleneck.
  let pending: Promise<unknown> = Promise.resolve();
  const flush = async (): Promise<void> => {
    signal?.throwIfAborted();
    await pending;
    if (used === 0) return;
    const full = buffer.subarray(0, used);
    bytes += used;
    pending = file.write(full);
    current = 1 - current;
    buffer = buffers[current] as Buffer;
    used = 0;
  };
  const put = async (text: string): Promise<void> => {
    // A UTF-16 code unit never takes more than 3 bytes in UTF-8.
    if (used + text.length * 3 > BUFFER_BYTES) {
      await flush();
      if (text.length * 3 > BUFFER_BYTES) {
        const big = Buffer.from(text, "utf8");
        await pending;
        bytes += big.length;
        pending = file.write(big);
        return;
      }
    }
    used += buffer.write(text, used, "utf8");
  };
  try {
    await put(`${CAMPAIGN_CSV_COLUMNS.join(",")}${EOL}`);
    for (const { task, round } of rounds) {
      let scheduledMs = Number.NaN;
      let scheduled = "";
      for (const row of world.roundRows(task, round)) {
        if (row.scheduled_at !== scheduledMs) {
          scheduledMs = row.scheduled_at;
          scheduled = time(scheduledMs);
        }
        const line = formatRow(row, time, scheduled);
        rows += 1;
        if (used + line.length * 3 <= BUFFER_BYTES) used += buffer.write(line, used, "utf8");
        else await put(line);
      }
    }
    await flush();
    await pending;
  } finally {
    await pending.catch(() => undefined);
    await file.close();
  }
  return { bytes, rows };
}
