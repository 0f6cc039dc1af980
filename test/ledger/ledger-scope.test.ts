import { mkdtemp, readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CreateExportJobRequest, ExportJob } from "../../src/api/schemas.js";
import { JobLedger, ledgerScope } from "../../src/ledger/ledger.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ledger-scope-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const request: CreateExportJobRequest = { type: "campaign_event_data", campaign_id: "c1" };
const budget = { count: 5, windowSeconds: 600 };
const SCOPE = ledgerScope("https://api.example.com", "app");
function job(id: string, status: ExportJob["status"], extra: Partial<ExportJob> = {}): ExportJob {
  return {
    _id: id,
    application_id: "app",
    type: "campaign_event_data",
    status,
    campaign_id: "c1",
    created_at: "2026-01-10T00:00:00Z",
    updated_at: "2026-01-10T00:00:00Z",
    ...extra,
  };
}

describe("ledger scopes", () => {
  it("keeps jobs and budget of each service and application apart", async () => {
    const a = new JobLedger(dir, budget, Date.now, ledgerScope("https://api.example.com", "app-a"));
    const b = new JobLedger(dir, budget, Date.now, ledgerScope("https://api.example.com", "app-b"));
    const sandbox = new JobLedger(dir, budget, Date.now, ledgerScope("sandbox", undefined));
    await a.reserveCreate();
    await a.recordCreated(request, "k", job("ja", "completed"));
    expect((await a.list()).map((e) => e.job_id)).toEqual(["ja"]);
    expect(await b.list()).toEqual([]);
    expect(await sandbox.list()).toEqual([]);
    expect((await a.budgetStatus()).used).toBe(1);
    expect((await b.budgetStatus()).used).toBe(0);
    expect(await b.get("ja")).toBeUndefined();
    expect(new Set([a.path, b.path, sandbox.path]).size).toBe(3);
  });
});

describe("reserveCreate", () => {
  it("never lets parallel callers, also through two ledger instances, pass the budget", async () => {
    const scope = ledgerScope("sandbox", undefined);
    const one = new JobLedger(dir, budget, Date.now, scope);
    const two = new JobLedger(dir, budget, Date.now, scope);
    const results = await Promise.all(
      Array.from({ length: 14 }, (_, i) => (i % 2 === 0 ? one : two).reserveCreate()),
    );
    expect(results.filter((r) => r.reserved)).toHaveLength(budget.count);
    expect((await one.budgetStatus()).used).toBe(budget.count);
    const file = JSON.parse(await readFile(one.path, "utf8")) as { create_calls: number[] };
    expect(file.create_calls).toHaveLength(budget.count);
  });
});

describe("reuse age (data of open ranges grows)", () => {
  const day = 24 * 3600 * 1000;
  const created = Date.parse("2026-01-10T00:00:00Z");

  async function completedWithFile(now: () => number): Promise<JobLedger> {
    const ledger = new JobLedger(dir, budget, now, SCOPE);
    await ledger.recordCreated(request, "k", job("j1", "triggered"));
    await ledger.updateJob(
      job("j1", "completed", {
        file_name: "f",
        file_ext: "csv",
        download_url: "https://files.example.com/f.csv",
        download_url_expires_at: new Date(created + day).toISOString(),
      }),
    );
    const path = join(dir, "f.csv");
    await writeFile(path, "a,b\n");
    await ledger.recordDownload("j1", path, 4);
    return ledger;
  }

  it("reuses an open range's file only within the URL's 24 hours", async () => {
    let now = created + 3600_000;
    const ledger = await completedWithFile(() => now);
    expect((await ledger.findReusable("k"))?.job_id).toBe("j1");
    now = created + 2 * day;
    expect(await ledger.findReusable("k")).toBeUndefined();
    // A range still open when the job ran (ends after its creation) is no better.
    expect(await ledger.findReusable("k", { rangeEndsAt: created + 3600_000 })).toBeUndefined();
  });

  it("reuses a file of a range that had ended before the job was created, at any age", async () => {
    let now = created + 3600_000;
    const ledger = await completedWithFile(() => now);
    now = created + 30 * day;
    expect((await ledger.findReusable("k", { rangeEndsAt: created - day }))?.job_id).toBe("j1");
  });
});

describe("robustness", () => {
  it("skips a bad entry with a warning shown once, keeping the good ones", async () => {
    const ledger = new JobLedger(dir, budget, Date.now, SCOPE);
    await ledger.recordCreated(request, "k", job("good", "triggered"));
    const file = JSON.parse(await readFile(ledger.path, "utf8")) as { jobs: unknown[] };
    file.jobs.push({ job_id: 42, status: "nonsense" });
    await writeFile(ledger.path, JSON.stringify(file));
    expect((await ledger.list()).map((e) => e.job_id)).toEqual(["good"]);
    expect(ledger.takeWarnings()).toEqual([expect.stringContaining("1 unreadable entry")]);
    await ledger.list();
    expect(ledger.takeWarnings()).toEqual([]);
  });

  it("does not rewrite the file when a poll brings no news", async () => {
    const ledger = new JobLedger(dir, budget, Date.now, SCOPE);
    await ledger.recordCreated(request, "k", job("j", "processing"));
    // An mtime set far back (not from the process clock): any rewrite would move it, at any
    // file-system granularity.
    const longAgo = new Date("2001-01-01T00:00:00Z");
    await utimes(ledger.path, longAgo, longAgo);
    const before = (await stat(ledger.path)).mtimeMs;
    await ledger.updateJob(job("j", "processing"));
    expect((await stat(ledger.path)).mtimeMs).toBe(before);
    await ledger.updateJob(job("j", "completed"));
    expect((await stat(ledger.path)).mtimeMs).toBeGreaterThan(before);
  });

  it("recovers a lock left by a killed process", async () => {
    const ledger = new JobLedger(dir, budget, Date.now, SCOPE);
    await ledger.recordCreated(request, "k", job("j", "processing"));
    // A PID that cannot be running (above the kernel's maximum).
    await writeFile(`${ledger.path}.lock`, "4194305\n");
    const started = Date.now();
    await ledger.updateJob(job("j", "completed"));
    expect(Date.now() - started).toBeLessThan(2000);
    expect((await ledger.get("j"))?.status).toBe("completed");
  });
});
