import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { stagingRoot } from "../../src/history/layout.js";
import { queryHistory } from "../../src/history/query.js";
import { waitUntil } from "../helpers/wait-until.js";
import {
  type CsvRow,
  type HistoryFixture,
  historyFixture,
  NOW,
  userRows,
  writeCampaignCsv,
} from "./fixtures.js";

/**
 * Real processes (the built package, dist/) adding exports to one history folder: two at once
 * add a job once, and one killed with SIGKILL in the middle leaves nothing a reader sees; the
 * next start sweeps what it left and adds the export whole.
 */

const DIST = fileURLToPath(new URL("../../dist/", import.meta.url));
const LIMITS = { memoryMb: 256, threads: 1, timeoutSeconds: 60 };

/** A child that opens the history in `folder` and adds `csv` as `jobId`, printing the result. */
const CHILD = `
const [dist, folder, csv, jobId, now] = process.argv.slice(1);
const { History } = await import(new URL("history/history.js", dist));
const { FileCatalogueStore } = await import(new URL("history/catalogue-file.js", dist));
const history = new History({
  folder,
  store: new FileCatalogueStore(folder + "/catalogue.json"),
  keepDays: 400,
  timeZone: "Asia/Seoul",
  now: () => Number(now),
  work: { memoryMb: 128, threads: 1 },
});
const result = await history.ingestCampaignExport({
  path: csv, jobId, campaignId: "camp", window: {}, jobCreatedAt: "2026-11-10T00:00:00Z",
});
process.stdout.write(JSON.stringify(result));
`;

function child(
  folder: string,
  csv: string,
  jobId: string,
): { process: ChildProcess; result: Promise<{ status: string }> } {
  const proc = spawn(
    process.execPath,
    ["--input-type=module", "-e", CHILD, pathToFileURL(DIST).href, folder, csv, jobId, String(NOW)],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  let err = "";
  proc.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  proc.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const result = new Promise<{ status: string }>((resolve, reject) => {
    proc.once("exit", (code, signal) => {
      if (code === 0) resolve(JSON.parse(out) as { status: string });
      else reject(new Error(`child ended with ${code ?? signal}: ${err}`));
    });
  });
  return { process: proc, result };
}

/** `users` users with a send and a receipt in each of three rounds of two months. */
function rows(users: number): CsvRow[] {
  const rounds = [
    { task: "t1", at: "2026-10-05 09:00:00" },
    { task: "t2", at: "2026-11-02 10:00:00" },
    { task: "t3", at: "2026-11-09 10:00:00", group: "그룹A" },
  ];
  return rounds.flatMap((round) =>
    Array.from({ length: users }, (_, u) =>
      userRows(round, String(u), ["message_sent", "message_received"]),
    ).flat(),
  );
}

let f: HistoryFixture;
beforeAll(() => {
  if (!existsSync(join(DIST, "history", "history.js"))) {
    throw new Error("dist/history missing: run npm run build (npm test does)");
  }
});
beforeEach(async () => {
  f = await historyFixture();
});
afterEach(async () => {
  await f.close();
});

async function count(): Promise<unknown> {
  const answer = await queryHistory(f.history, {
    sql: "SELECT count(*) FROM history",
    maxRows: 1,
    limits: LIMITS,
    spillParent: f.dir,
  });
  return answer.rows[0]?.[0];
}

describe("several processes on one history", () => {
  it("two processes adding one job at once add it once", async () => {
    const csv = await writeCampaignCsv(join(f.dir, "a.csv"), rows(20_000));
    const a = child(f.history.folder, csv, "job-1");
    const b = child(f.history.folder, csv, "job-1");
    const results = await Promise.all([a.result, b.result]);
    expect(results.map((r) => r.status).sort()).toEqual(["added", "already_added"]);
    expect(await count()).toBe(120_000);
    expect((await f.history.catalogue()).exports.map((e) => e.job_id)).toEqual(["job-1"]);
  }, 180_000);

  it("a process killed while adding leaves nothing visible; the next start sweeps it and adds the file whole", async () => {
    const csv = await writeCampaignCsv(join(f.dir, "a.csv"), rows(100_000));
    const running = child(f.history.folder, csv, "job-1");
    const staging = stagingRoot(f.history.folder);
    await waitUntil(
      async () => (await readdir(staging).catch(() => [])).some((n) => n.startsWith("work.")),
      "the child's staging folder",
      { timeoutMs: 120_000 },
    );
    running.process.kill("SIGKILL");
    await expect(running.result).rejects.toThrow(/SIGKILL/);
    expect((await f.history.catalogue()).generation).toBe(0);
    expect(await count()).toBe(0);
    expect(await f.history.recover()).toEqual({ files: 0, staging: 1 });
    expect(await readdir(staging)).toEqual([]);
    const again = await f.history.ingestCampaignExport({
      path: csv,
      jobId: "job-1",
      campaignId: "camp",
      window: {},
      jobCreatedAt: "2026-11-10T00:00:00Z",
    });
    expect(again).toMatchObject({ status: "added", rows: 600_000, rows_kept: 600_000 });
    expect(await count()).toBe(600_000);
  }, 300_000);
});
