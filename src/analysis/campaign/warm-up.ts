import { CAMPAIGN_CSV_COLUMNS } from "../../api/csv-columns.js";
import { U64Map } from "../csv/hash-table.js";
import { MapBatch } from "../csv/map-batch.js";
import { CsvScanner } from "../csv/scanner.js";
import { ROW_KEY_FIELDS } from "./row-keys.js";
import { rowHandler } from "./row-to-tally.js";
import { type CampaignTally, newTally } from "./tally.js";
import { closeTally } from "./tally-in-one-pass.js";

/**
 * The row pass run over a small made-up export before a thread reads a large one.
 *
 * V8 optimizes the hot functions (the scanner, the row handler, the map updates) with what they
 * have done so far, and a path first taken later (the first quoted field, failure or purchase,
 * the first collision in a map, the first map that grows) throws the optimized code away to be
 * compiled again, on V8's background threads, which then take their time from the readers.
 * Every such path taken once here, on 168 rows read three times, with the maps' updates of
 * present keys and merges, gives the compiler the whole picture the first time: the threads'
 * reading and the merge then take no path for the first time (only the maps' forEach, given a
 * new callback by each caller). What it saves: bench/RESULTS.md, "What the performance code is
 * worth".
 */

const EVENTS = [
  "message_sent",
  "message_received",
  "message_failed",
  "push_opened",
  "landing_clicked",
  "purchase",
  "control_assigned",
];
const MESSAGES = ["token expired", '"quota, daily"', '"line one\nline ""two"""'];
const PROPERTIES = [
  '"{""revenue"": 12000, ""currency"": ""KRW""}"',
  '"{""amount"": ""26.74"", ""currency_code"": ""USD""}"',
  "{}",
];

/** A made-up export taking every path of the row pass: every event in rounds written every way. */
export function warmUpSample(): Buffer {
  const lines = [CAMPAIGN_CSV_COLUMNS.join(",")];
  for (let i = 0; i < 168; i++) {
    const event = EVENTS[i % EVENTS.length] as string;
    const control = event === "control_assigned" || (event === "purchase" && i % 2 === 0);
    const task = i % 3 === 0 ? '"tsk_""b"""' : i % 3 === 1 ? '"tsk_a"' : "tsk_a";
    const [user, platformUser] =
      i % 4 === 0 ? ["", ""] : i % 4 === 1 ? [`m${i}@example.com`, ""] : ["", `${i}`.repeat(3)];
    const failed = event === "message_failed";
    const properties = event === "purchase" ? (PROPERTIES[i % 3] as string) : "{}";
    const row = [
      task,
      "2024-05-21 12:00:00",
      control ? "대조군" : "그룹A",
      event,
      user,
      platformUser,
      `2024-05-2${1 + (i % 3)} 1${i % 10}:0${i % 10}:07`,
      control ? "control" : i % 5 === 0 ? "sms" : "app_push",
      failed ? `E${i % 4}` : "",
      failed ? (MESSAGES[i % 3] as string) : "",
      properties,
      properties,
      i % 5 === 0 ? '"{""k"": 1}"' : "{}",
    ];
    lines.push(row.join(",") + (i % 2 === 0 ? "\r" : ""));
  }
  return Buffer.from(`${lines.join("\n")}\n`, "utf8");
}

/**
 * Map updates that collide, wrap around the table's end and make it grow, through a batch; then
 * every key again (present: an earlier and a later time), and merges of partial maps as the
 * first thread makes of the workers' maps.
 */
function exerciseMaps(): void {
  const maps = [new U64Map(16), new U64Map(16, false)];
  const batch = new MapBatch(4);
  for (let again = 0; again < 2; again++) {
    for (let k = 0; k < 64; k++) {
      const value = again === 0 ? 100 - k : k;
      for (const map of maps) batch.addMin(map, Math.imul(k, 0x9e3779b1), k & 3, value);
    }
  }
  batch.flush();
  for (const map of maps) {
    const values = map === maps[0];
    // A part larger than the map (whose storage the merge keeps), a smaller one, the map into an
    // empty one.
    for (const cap of [1024, 16]) {
      const part = new U64Map(cap, values);
      for (let k = 60; k < 70; k++) part.addMin(Math.imul(k, 0x9e3779b1), k & 3, k);
      map.mergeMin(part);
    }
    new U64Map(16, values).mergeMin(map);
    // An empty map larger than the part (a round the first thread never saw).
    const part = new U64Map(16, values);
    part.addMin(1, 2, 3);
    new U64Map(1024, values).mergeMin(part);
  }
}

let warm = false;

/**
 * Runs the row pass over the sample once per thread (later calls do nothing and return nothing);
 * returns the sample's tallies, for the tests.
 */
export function warmUpRowPass(conversionType: string | undefined): CampaignTally[] {
  if (warm) return [];
  warm = true;
  exerciseMaps();
  const sample = warmUpSample();
  const tallies: CampaignTally[] = [];
  // In small slices and pieces, so records and quoted fields cross their ends as in a real read.
  // Slices of 16 KiB twice: the scanner's call of the row handler for whole records (never taken
  // in 64-byte slices) must see two handlers, or V8 compiles it for the warm-up's handler alone
  // and throws that code away at the real one (the worker's scanner and row handler, each time).
  for (const slice of [64, 1 << 14, 1 << 14]) {
    const t = newTally(sample.length);
    tallies.push(t);
    const scanner = new CsvScanner(rowHandler(t, conversionType, true), {
      keyFields: ROW_KEY_FIELDS,
      sliceBytes: slice,
    });
    for (let at = 0; at < sample.length; at += 700) scanner.push(sample.subarray(at, at + 700));
    scanner.end();
    closeTally(t, true);
  }
  return tallies;
}
