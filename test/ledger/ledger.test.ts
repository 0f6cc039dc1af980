import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CreateExportJobRequest, ExportJob } from "../../src/api/schemas.js";
import { budgetStatus } from "../../src/ledger/budget.js";
import { JobLedger } from "../../src/ledger/ledger.js";

const SCOPE = "test";
const builtLedger = new URL("../../dist/ledger/ledger.js", import.meta.url);

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ledger-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const request: CreateExportJobRequest = { type: "campaign_event_data", campaign_id: "c1" };
function job(id: string, status: ExportJob["status"], extra: Partial<ExportJob> = {}): ExportJob {
  return {
    _id: id,
    application_id: "app",
    type: "campaign_event_data",
    status,
    campaign_id: "c1",
    created_at: "2026-01-01T00:00:00Z",
    updated_at: "2026-01-01T00:00:00Z",
    ...extra,
  };
}

describe("JobLedger", () => {
  it("survives a restart with history, download path and budget calls", async () => {
    let now = 1_000_000;
    const first = new JobLedger(dir, { count: 10, windowSeconds: 600 }, () => now, SCOPE);
    expect((await first.reserveCreate()).reserved).toBe(true);
    await first.recordCreated(request, "k1", job("j1", "triggered"));
    now += 1000;
    await first.updateJob(job("j1", "processing"));
    now += 1000;
    await first.updateJob(
      job("j1", "completed", {
        file_name: "f",
        file_ext: "csv",
        file_size: 3,
        download_url: "https://files.example.com/f.csv?X-Signature=abcdef123",
        download_url_expires_at: new Date(now + 3_600_000).toISOString(),
      }),
    );
    const filePath = join(dir, "f.csv");
    await writeFile(filePath, "a,b");
    await first.recordDownload("j1", filePath, 3);

    const second = new JobLedger(dir, { count: 10, windowSeconds: 600 }, () => now, SCOPE);
    const entry = await second.get("j1");
    expect(entry?.history.map((h) => h.status)).toEqual(["triggered", "processing", "completed"]);
    expect(entry?.file_path).toBe(filePath);
    expect((await second.budgetStatus()).used).toBe(1);
    // The pre-signed signature never reaches the file.
    expect(await readFile(second.path, "utf8")).not.toContain("abcdef123");
    expect((await second.findReusable("k1"))?.job_id).toBe("j1");
    expect(await second.findReusable("k2")).toBeUndefined();
  });

  it("counts calls from a clock that ran ahead (a restart at the same pinned time)", async () => {
    const budget = { count: 10, windowSeconds: 600 };
    const pinned = 5_000_000_000;
    // The first run: four creations during its 5 minutes.
    let now = pinned;
    const first = new JobLedger(dir, budget, () => now, `${SCOPE}-ahead`);
    for (let i = 0; i < 4; i++) {
      now = pinned + i * 60_000;
      await first.reserveCreate();
    }
    // Restarted: the pinned clock starts over, so those calls lie up to 3 minutes "ahead".
    now = pinned + 10_000;
    const second = new JobLedger(dir, budget, () => now, `${SCOPE}-ahead`);
    expect((await second.recent(1)).budget.used).toBe(4);
    expect((await second.budgetStatus()).used).toBe(4);
    const reservation = await second.reserveCreate();
    expect(reservation.status.used).toBe(5);
    // Each leaves the window one window after its stamp: at pinned + 10 s + 10 min the calls
    // at pinned and pinned + 10 s have left, those at + 1, 2 and 3 min have not; at + 13 min none.
    now = pinned + 10_000 + 600_000;
    expect((await second.budgetStatus()).used).toBe(3);
    now = pinned + 3 * 60_000 + 600_000;
    expect((await second.budgetStatus()).used).toBe(0);
    // With the budget full of calls stamped ahead, the next slot is when one of them leaves.
    now = pinned;
    const third = new JobLedger(dir, { count: 2, windowSeconds: 600 }, () => now, `${SCOPE}-full`);
    await third.reserveCreate();
    now = pinned + 60_000;
    await third.reserveCreate();
    now = pinned - 120_000;
    const status = await third.budgetStatus();
    expect(status.used).toBe(2);
    expect(status.allowed).toBe(false);
    expect(status.nextSlotAt).toBe(pinned + 600_000);
    expect((await third.reserveCreate()).reserved).toBe(false);
  });

  it("reuses a completed job only while its file exists or its URL is valid", async () => {
    let now = Date.parse("2026-01-01T00:00:00Z");
    const ledger = new JobLedger(dir, { count: 10, windowSeconds: 600 }, () => now, SCOPE);
    await ledger.recordCreated(request, "k", job("j1", "triggered"));
    await ledger.updateJob(
      job("j1", "completed", {
        file_name: "f",
        file_ext: "csv",
        file_size: 3,
        download_url: "https://x.example.com/f",
        download_url_expires_at: new Date(now + 2 * 3_600_000).toISOString(),
      }),
    );
    expect((await ledger.findReusable("k"))?.job_id).toBe("j1");
    now += 3 * 3_600_000;
    expect(await ledger.findReusable("k")).toBeUndefined();
    await ledger.recordDownload("j1", join(dir, "missing.csv"), 3);
    expect(await ledger.findReusable("k")).toBeUndefined();
  });

  it("lists the newest entries with the total and the budget from one read", async () => {
    const now = 5_000_000;
    const ledger = new JobLedger(dir, { count: 10, windowSeconds: 600 }, () => now, SCOPE);
    for (const id of ["j1", "j2", "j3"]) {
      await ledger.reserveCreate();
      await ledger.recordCreated(request, id, job(id, "triggered"));
    }
    const listing = await ledger.recent(2);
    expect(listing.entries.map((e) => e.job_id)).toEqual(["j3", "j2"]);
    expect(listing.total).toBe(3);
    expect(listing.budget).toEqual(
      budgetStatus([now, now, now], undefined, { count: 10, windowSeconds: 600 }, now),
    );
    expect(listing.budget.used).toBe(3);
  });

  it("keeps a corrupt file as a backup and starts fresh with a warning", async () => {
    const ledger = new JobLedger(dir, { count: 10, windowSeconds: 600 }, Date.now, SCOPE);
    await writeFile(ledger.path, "{not json");
    expect(await ledger.list()).toEqual([]);
    expect(ledger.warnings[0]).toContain("could not be read");
    const names = await readdir(dir);
    expect(names.some((n) => n.includes(".corrupt-"))).toBe(true);
    await ledger.recordCreated(request, "k", job("j2", "triggered"));
    expect((await ledger.list()).map((e) => e.job_id)).toEqual(["j2"]);
  });

  it("stays readable after the writing process is killed with SIGKILL", async () => {
    const script = `
      const { JobLedger } = await import(${JSON.stringify(builtLedger.href)});
      const ledger = new JobLedger(${JSON.stringify(dir)}, { count: 1000000, windowSeconds: 600 }, Date.now, ${JSON.stringify(SCOPE)});
      let i = 0;
      for (;;) {
        await ledger.reserveCreate();
        await ledger.recordCreated({ type: "campaign_event_data", campaign_id: "c" }, "k" + i, {
          _id: "job-" + i++, application_id: "a", type: "campaign_event_data", status: "triggered",
          created_at: "2026-01-01T00:00:00Z", updated_at: "2026-01-01T00:00:00Z" });
        // Killed once it has written a few times, so the kill lands among writes.
        if (i === 20) process.stdout.write("writing\\n");
      }`;
    // The child runs the built code (built by this file's vitest project): Node 20 cannot run TypeScript itself.
    if (!existsSync(builtLedger))
      throw new Error("dist/ledger/ledger.js missing: run npm run build");
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout.once("data", () => resolve());
      child.once("exit", (code) => reject(new Error(`writer exited early with ${code}`)));
    });
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    const ledger = new JobLedger(dir, { count: 10, windowSeconds: 600 }, Date.now, SCOPE);
    const count = await ledger.count();
    expect(ledger.warnings).toEqual([]);
    expect(count).toBeGreaterThan(0);
  });
});

describe("budgetStatus", () => {
  it("allows up to the limit and names when the oldest call leaves the window", () => {
    const budget = { count: 3, windowSeconds: 60 };
    const now = 100_000;
    const calls = [now - 50_000, now - 30_000, now - 10_000];
    const blocked = budgetStatus(calls, undefined, budget, now);
    expect(blocked.allowed).toBe(false);
    expect(blocked.nextSlotAt).toBe(now - 50_000 + 60_000);
    const open = budgetStatus(calls, undefined, budget, now + 10_001);
    expect(open.allowed).toBe(true);
    expect(open.used).toBe(2);
  });

  it("honours a server Retry-After beyond the local count", () => {
    const status = budgetStatus([], 200_000, { count: 10, windowSeconds: 600 }, 100_000);
    expect(status.allowed).toBe(false);
    expect(status.serverRateLimited).toBe(true);
    expect(status.nextSlotAt).toBe(200_000);
  });
});
