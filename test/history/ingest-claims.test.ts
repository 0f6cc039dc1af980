import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { leaseHolderGone } from "../../src/exports/download-lease.js";
import type { History } from "../../src/history/history.js";
import { ledgerIngestClaims } from "../../src/history/ingest-claims.js";
import { JobLedger, ledgerScope } from "../../src/ledger/ledger.js";
import { addLogForwarder } from "../../src/log.js";
import {
  type HistoryFixture,
  historyFixture,
  NOW,
  userRows,
  writeCampaignCsv,
} from "./fixtures.js";

/**
 * Two processes on one data folder, each with its own ledger and history instances (as each
 * process opens them) and its own claim holder: asked to add the same downloaded file at once
 * (a download's ingestion and another process's catch-up), only one reads it. Each reading logs
 * one line, which the test counts.
 */

const READING = "history: reading an export into the history";
const BUDGET = { count: 10, windowSeconds: 600 };
const SCOPE = ledgerScope("sandbox", undefined);

let f: HistoryFixture;
let readings: string[];
const ledgers: JobLedger[] = [];
let stopWatching: () => void = () => {};

beforeEach(async () => {
  f = await historyFixture();
  readings = [];
  stopWatching = addLogForwarder((_level, message, fields) => {
    if (message === READING) readings.push(String(fields?.job_id));
  });
});
afterEach(async () => {
  stopWatching();
  for (const ledger of ledgers.splice(0)) await ledger.close();
  await f.close();
});

/** A process's own ledger instance on the shared data folder. */
function ledger(): JobLedger {
  const opened = new JobLedger(f.dir, BUDGET, () => NOW, SCOPE);
  ledgers.push(opened);
  return opened;
}

/** A History on the fixture's folder as another process opens it, with its own claims. */
function processHistory(): History {
  return f.reopen(undefined, ledgerIngestClaims(ledger(), leaseHolderGone));
}

async function csvOfUsers(name: string, users: number): Promise<string> {
  const round = { task: "t1", at: "2026-11-02 10:00:00" };
  const rows = Array.from({ length: users }, (_, u) =>
    userRows(round, String(u), ["message_sent", "message_received"]),
  ).flat();
  return writeCampaignCsv(join(f.dir, name), rows);
}

const input = (path: string, jobId: string) => ({
  path,
  jobId,
  campaignId: "camp",
  window: {},
  jobCreatedAt: "2026-11-10T00:00:00Z",
});

describe("claims to add a job's file", () => {
  it("two processes adding one file at once read it once, and both answer", async () => {
    const csv = await csvOfUsers("a.csv", 5000);
    const [one, two] = [processHistory(), processHistory()];
    const results = await Promise.all([
      one.ingestCampaignExport(input(csv, "job-1")),
      two.ingestCampaignExport(input(csv, "job-1")),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(["added", "already_added"]);
    expect(readings).toEqual(["job-1"]);
    expect((await f.history.catalogue()).exports.map((e) => e.job_id)).toEqual(["job-1"]);
    // The claim went with the work: a later file of the same processes is read at once.
    const next = await csvOfUsers("b.csv", 10);
    expect((await two.ingestCampaignExport(input(next, "job-2"))).status).toBe("added");
    expect(readings).toEqual(["job-1", "job-2"]);
  });

  it("a claim whose holder died on this machine does not hold the file back", async () => {
    const csv = await csvOfUsers("a.csv", 10);
    // A holder of this host whose process ended (pid 2^22 + 1 is above Linux's pid limit).
    const dead = `${hostname()}:${2 ** 22 + 1}:0000`;
    expect(await ledger().acquireDownloadLease("history:job-1", dead, 600_000)).toBe(true);
    const result = await processHistory().ingestCampaignExport(input(csv, "job-1"));
    expect(result.status).toBe("added");
    expect(readings).toEqual(["job-1"]);
  });

  it("without claims, two processes both read the file (the work the claims spare)", async () => {
    const csv = await csvOfUsers("a.csv", 5000);
    const [one, two] = [f.reopen(), f.reopen()];
    const results = await Promise.all([
      one.ingestCampaignExport(input(csv, "job-1")),
      two.ingestCampaignExport(input(csv, "job-1")),
    ]);
    // The catalogue keeps it once all the same.
    expect(results.map((r) => r.status).sort()).toEqual(["added", "already_added"]);
    expect((await f.history.catalogue()).exports.map((e) => e.job_id)).toEqual(["job-1"]);
    expect(readings).toEqual(["job-1", "job-1"]);
  });
});
