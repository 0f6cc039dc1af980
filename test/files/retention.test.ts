import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { runRetention } from "../../src/exports/retention-run.js";
import { exportsFolder } from "../../src/files/data-folder.js";
import { fileSystemNow } from "../../src/files/fs-clock.js";
import { withFileInUse } from "../../src/files/in-use.js";
import { RECENT_MS, sweepExportFiles } from "../../src/files/retention.js";
import { JobLedger, ledgerScope } from "../../src/ledger/ledger.js";
import { cachePath, fileFingerprint, queryCacheFolder } from "../../src/query/cache-files.js";

// Every age here is relative to this pinned clock, and every mtime is set explicitly: nothing
// depends on today's date or on when the test files were written.
const NOW = Date.parse("2031-03-15T12:00:00Z");
const DAY = 24 * 3600 * 1000;
const MB = 1024 * 1024;
const BUDGET = { count: 10, windowSeconds: 600 };

let dataDir: string;
let exportsDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "crm-retention-"));
  exportsDir = exportsFolder(dataDir);
  await mkdir(exportsDir, { recursive: true });
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

/** A file of `mb` megabytes whose mtime is `ageMs` before NOW. */
async function exportFile(name: string, mb: number, ageMs: number): Promise<string> {
  const path = join(exportsDir, name);
  await writeFile(path, Buffer.alloc(Math.round(mb * MB), 0x61));
  const at = (NOW - ageMs) / 1000;
  await utimes(path, at, at);
  return path;
}

const notInUse = () => false;

describe("sweepExportFiles", () => {
  it("removes files older than the age limit and keeps the younger ones", async () => {
    const old = await exportFile("old.csv", 0.1, 31 * DAY);
    const young = await exportFile("young.csv", 0.1, 29 * DAY);
    const result = await sweepExportFiles(
      exportsDir,
      { maxAgeDays: 30, maxBytes: 0 },
      { now: NOW, inUse: notInUse },
    );
    expect(result.removed).toEqual([{ path: old, bytes: Math.round(0.1 * MB), reason: "age" }]);
    expect(result.keptFiles).toBe(1);
    expect(await readdir(exportsDir)).toEqual(["young.csv"]);
    expect(young).toContain("young.csv");
  });

  it("over the size limit removes the oldest first until it fits", async () => {
    await exportFile("a.csv", 2, 5 * DAY);
    await exportFile("b.csv", 2, 4 * DAY);
    await exportFile("c.csv", 2, 3 * DAY);
    const result = await sweepExportFiles(
      exportsDir,
      { maxAgeDays: 30, maxBytes: 4.5 * MB },
      { now: NOW, inUse: notInUse },
    );
    expect(result.removed.map((r) => [r.reason, r.path.slice(-5)])).toEqual([["size", "a.csv"]]);
    expect(result.keptBytes).toBe(4 * MB);
    expect((await readdir(exportsDir)).sort()).toEqual(["b.csv", "c.csv"]);
  });

  it("never removes a file in use or one just downloaded, whatever its age or the total size", async () => {
    const inUse = await exportFile("being-read.csv", 2, 90 * DAY);
    await exportFile("expired.csv", 1, 60 * DAY);
    await exportFile("just-downloaded.csv", 3, RECENT_MS / 2);
    // A download in progress: its own code removes it if it fails (api/download.ts).
    await exportFile(".0123456789abcdef.part", 1, 90 * DAY);
    await mkdir(join(exportsDir, "a-folder"));

    const result = await withFileInUse(inUse, () =>
      sweepExportFiles(
        exportsDir,
        { maxAgeDays: 30, maxBytes: 1 * MB },
        // The real registry: what summarize_export marks while it reads a file.
        { now: NOW, inUse: (p) => p === inUse },
      ),
    );
    expect(result.removed.map((r) => r.path.slice(exportsDir.length + 1))).toEqual(["expired.csv"]);
    expect(result.spared).toBe(2);
    expect((await readdir(exportsDir)).sort()).toEqual([
      ".0123456789abcdef.part",
      "a-folder",
      "being-read.csv",
      "just-downloaded.csv",
    ]);
  });

  it("0 turns both limits off, and a missing folder is an empty one", async () => {
    await exportFile("ancient.csv", 1, 3650 * DAY);
    const off = await sweepExportFiles(
      exportsDir,
      { maxAgeDays: 0, maxBytes: 0 },
      { now: NOW, inUse: notInUse },
    );
    expect(off.removed).toEqual([]);
    const missing = await sweepExportFiles(
      join(dataDir, "nope"),
      { maxAgeDays: 1, maxBytes: 1 },
      { now: NOW, inUse: notInUse },
    );
    expect(missing).toEqual({ removed: [], keptFiles: 0, keptBytes: 0, spared: 0 });
  });
});

describe("runRetention", () => {
  it("marks the removed files in every ledger of the data folder, and the real in-use registry protects a file being read", async () => {
    const ledgerNow = () => NOW;
    const scopes = [ledgerScope("https://a.example", "app-1"), ledgerScope("sandbox", undefined)];
    const ledgers = scopes.map((scope) => new JobLedger(dataDir, BUDGET, ledgerNow, scope));
    const files = {
      old: await exportFile("exp_old_campaign.csv", 0.2, 40 * DAY),
      read: await exportFile("exp_read_campaign.csv", 0.2, 40 * DAY),
      other: await exportFile("exp_other_scenario.xlsx", 0.2, 45 * DAY),
      fresh: await exportFile("exp_fresh_campaign.csv", 0.2, 2 * DAY),
    };
    const record = async (ledger: JobLedger, jobId: string, path: string) => {
      await ledger.recordCreated(
        { type: "campaign_event_data", campaign_id: "c1" },
        `key-${jobId}`,
        { _id: jobId, type: "campaign_event_data", status: "completed" } as never,
      );
      await ledger.recordDownload(jobId, path, 0.2 * MB);
    };
    const [first, second] = ledgers as [JobLedger, JobLedger];
    await record(first, "exp_old", files.old);
    await record(first, "exp_read", files.read);
    await record(first, "exp_fresh", files.fresh);
    await record(second, "exp_other", files.other);

    const result = await withFileInUse(files.read, () =>
      runRetention({
        dataFolder: dataDir,
        policy: { maxAgeDays: 30, maxBytes: 0 },
        now: NOW,
        ledgerNow,
        budget: BUDGET,
      }),
    );
    expect(result.removed.map((r) => r.path).sort()).toEqual([files.old, files.other].sort());

    const old = await first.get("exp_old");
    expect(old).toMatchObject({
      file_path: files.old,
      file_removed_at: new Date(NOW).toISOString(),
      file_removed_reason: "age",
    });
    expect((await first.get("exp_read"))?.file_removed_at).toBeUndefined();
    expect((await first.get("exp_fresh"))?.file_removed_at).toBeUndefined();
    expect((await second.get("exp_other"))?.file_removed_reason).toBe("age");
    // Resources list only files that are still there.
    expect((await first.downloadedFiles()).map((e) => e.job_id).sort()).toEqual([
      "exp_fresh",
      "exp_read",
    ]);

    // Downloaded again later: the mark goes.
    await first.recordDownload("exp_old", files.old, 0.2 * MB);
    expect((await first.get("exp_old"))?.file_removed_at).toBeUndefined();
  });
});

describe("file ages without a given clock", () => {
  it("are judged by the file system's clock, so a shifted process clock removes nothing fresh", async () => {
    const fsNow = await fileSystemNow(exportsDir);
    const fresh = join(exportsDir, "exp_just_downloaded.csv");
    await writeFile(fresh, "a,b\n");
    const old = join(exportsDir, "exp_forty_days.csv");
    await writeFile(old, "a,b\n");
    await utimes(old, (fsNow - 40 * DAY) / 1000, (fsNow - 40 * DAY) / 1000);
    // The process clock 400 days ahead (an NTP step, faketime): the fresh file is not 400 days old.
    const real = Date.now.bind(Date);
    const shifted = vi.spyOn(Date, "now").mockImplementation(() => real() + 400 * DAY);
    try {
      const result = await runRetention({
        dataFolder: dataDir,
        policy: { maxAgeDays: 30, maxBytes: 0 },
        ledgerNow: Date.now,
        budget: BUDGET,
      });
      expect(result.removed.map((f) => f.path)).toEqual([old]);
    } finally {
      shifted.mockRestore();
    }
    expect((await readdir(exportsDir)).sort()).toEqual(["exp_just_downloaded.csv"]);
  });
});

describe("the Parquet copies of exports", () => {
  it("go with their export when retention removes it; a kept export keeps its copy", async () => {
    const old = await exportFile("exp_old_campaign.csv", 0.1, 40 * DAY);
    const kept = await exportFile("exp_kept_campaign.csv", 0.1, 2 * DAY);
    const copies = queryCacheFolder(dataDir);
    await mkdir(copies, { recursive: true });
    const copyOf = async (path: string) => {
      const copy = cachePath(dataDir, path, await fileFingerprint(path));
      await writeFile(copy, "PAR1");
      return copy;
    };
    const oldCopy = await copyOf(old);
    const keptCopy = await copyOf(kept);
    await runRetention({
      dataFolder: dataDir,
      policy: { maxAgeDays: 30, maxBytes: 0 },
      now: NOW,
      ledgerNow: () => NOW,
      budget: BUDGET,
      inUse: notInUse,
    });
    expect(await readdir(copies)).toEqual([basename(keptCopy)]);
    expect(basename(oldCopy)).toMatch(/^exp_old_campaign\.csv\.[0-9a-f]{16}\.parquet$/);
  });
});
