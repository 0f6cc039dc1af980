import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CAMPAIGN_CSV_COLUMNS } from "../../src/api/csv-columns.js";
import { FileCatalogueStore } from "../../src/history/catalogue-file.js";
import { History } from "../../src/history/history.js";
import type { IngestClaims } from "../../src/history/ingest-claims.js";
import { catalogueFilePath } from "../../src/history/layout.js";
import type { CatalogueStore } from "../../src/history/store.js";

/** One row of a campaign CSV (spec 2.4); columns left out are empty. */
export type CsvRow = Partial<Record<(typeof CAMPAIGN_CSV_COLUMNS)[number], string>>;

function field(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** The CSV text of `rows` with the export's header, CRLF line ends as the service writes them. */
export function campaignCsv(rows: readonly CsvRow[]): string {
  const lines = [CAMPAIGN_CSV_COLUMNS.join(",")];
  for (const row of rows)
    lines.push(CAMPAIGN_CSV_COLUMNS.map((c) => field(row[c] ?? "")).join(","));
  return `${lines.join("\r\n")}\r\n`;
}

export async function writeCampaignCsv(path: string, rows: readonly CsvRow[]): Promise<string> {
  await writeFile(path, campaignCsv(rows));
  return path;
}

/** A temporary folder with a history in it (file catalogue); `close` removes everything. */
export interface HistoryFixture {
  dir: string;
  history: History;
  /** Another History on the same folder and catalogue, as a second process would open it. */
  reopen(store?: CatalogueStore, claims?: IngestClaims): History;
  close(): Promise<void>;
}

/** 2026-11-20 12:00 in Seoul: the kept days count back from here. */
export const NOW = Date.parse("2026-11-20T03:00:00Z");

export async function historyFixture(
  options: {
    keepDays?: number;
    now?: () => number;
    store?: (folder: string) => CatalogueStore;
    memoryMb?: number;
  } = {},
): Promise<HistoryFixture> {
  const dir = await mkdtemp(join(tmpdir(), "history-"));
  const folder = join(dir, "history");
  const open = (store?: CatalogueStore, claims?: IngestClaims) =>
    new History({
      folder,
      store: store ?? options.store?.(folder) ?? new FileCatalogueStore(catalogueFilePath(folder)),
      keepDays: options.keepDays ?? 400,
      timeZone: "Asia/Seoul",
      now: options.now ?? (() => NOW),
      work: { memoryMb: options.memoryMb ?? 128, threads: 1 },
      claims,
    });
  const history = open();
  const opened: History[] = [history];
  return {
    dir,
    history,
    reopen(store, claims) {
      const next = open(store, claims);
      opened.push(next);
      return next;
    },
    async close() {
      for (const h of opened) await h.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The send-record and event rows of one user in one round. */
export function userRows(
  round: { task: string; at: string; group?: string },
  user: string,
  events: readonly string[],
  channel = "app_push",
): CsvRow[] {
  return events.map((event_type, i) => ({
    task_id: round.task,
    scheduled_at: round.at,
    group: round.group ?? "",
    event_type,
    user_id: `u_${user}`,
    platform_user_id: `pu_${user}`,
    captured_at: `${round.at.slice(0, 14)}${String(10 + i).padStart(2, "0")}:00`,
    channel: event_type.startsWith("message_") ? channel : "",
    event_properties: "{}",
    custom_event_properties: "{}",
    internal_event_properties: "{}",
  }));
}
