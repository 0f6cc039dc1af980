import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { CreateExportJobRequest, ExportJob } from "../../src/api/schemas.js";
import type { ExportBudget } from "../../src/ledger/budget.js";
import {
  CLAIM_LEASE_MS,
  CLAIM_MAX_MS,
  type ClaimOwner,
  holdClaim,
  newClaimOwner,
} from "../../src/ledger/pending-creation.js";
import type { LedgerStore } from "../../src/ledger/store.js";

/**
 * The behaviour every LedgerStore must have, run against each implementation (the file ledger,
 * PostgreSQL). `open` gives a store on the same shared state each time it is called within one
 * test (as a second process would open it) and a fresh state per test (`scope`).
 */
export interface StoreFixture {
  /** `monotonic`: the clock the store judges other processes' pending creations by. */
  open(
    scope: string,
    budget: ExportBudget,
    now: () => number,
    monotonic?: () => number,
  ): LedgerStore;
  /** Called once before the suite (e.g. start a database); may return a teardown. */
  setup?(): Promise<void>;
  teardown?(): Promise<void>;
}

const request: CreateExportJobRequest = { type: "campaign_event_data", campaign_id: "c1" };

export function job(
  id: string,
  status: ExportJob["status"],
  extra: Partial<ExportJob> = {},
): ExportJob {
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

export function describeLedgerStore(name: string, fixture: StoreFixture): void {
  describe(`LedgerStore behaviour: ${name}`, () => {
    let dir: string;
    let scope: string;
    let counter = 0;
    const opened: LedgerStore[] = [];
    const budget = { count: 10, windowSeconds: 600 };
    const open = (now: () => number, b: ExportBudget = budget, monotonic?: () => number) => {
      const store = fixture.open(scope, b, now, monotonic);
      opened.push(store);
      return store;
    };

    beforeAll(async () => {
      await fixture.setup?.();
    }, 60_000);
    afterAll(async () => {
      await fixture.teardown?.();
    }, 30_000);
    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), "ledger-store-"));
      counter += 1;
      scope = `s${process.pid}x${counter}x${Date.now().toString(36)}`;
    });
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close()));
      await rm(dir, { recursive: true, force: true });
    });

    it("keeps entries, history, creator and downloads for a second opener", async () => {
      let now = Date.parse("2026-01-01T00:00:00Z");
      const first = open(() => now);
      expect((await first.reserveCreate()).reserved).toBe(true);
      const created = await first.recordCreated(request, "k1", job("j1", "triggered"), "alice");
      expect(created.created_by).toBe("alice");
      now += 1000;
      await first.updateJob(job("j1", "processing"));
      now += 1000;
      await first.updateJob(
        job("j1", "completed", {
          file_name: "f",
          file_ext: "csv",
          download_url: "https://files.example.com/f.csv?X-Signature=abcdef123",
          download_url_expires_at: new Date(now + 3_600_000).toISOString(),
        }),
      );
      const path = join(dir, "f.csv");
      await writeFile(path, "a,b");
      await first.recordDownload("j1", path, 3);

      const second = open(() => now);
      const entry = await second.get("j1");
      expect(entry?.history.map((h) => h.status)).toEqual(["triggered", "processing", "completed"]);
      expect(entry?.created_by).toBe("alice");
      expect(entry?.request).toEqual(request);
      expect(entry?.file_path).toBe(path);
      expect(entry?.file_bytes).toBe(3);
      // The signed query is a secret: never stored.
      expect(entry?.job.download_url).not.toContain("abcdef123");
      expect((await second.budgetStatus()).used).toBe(1);
      expect(await second.count()).toBe(1);
      expect((await second.downloadedFiles()).map((e) => e.job_id)).toEqual(["j1"]);
      expect(await second.updateJob(job("unknown", "completed"))).toBeUndefined();
    });

    it("lists newest first with the total and the budget", async () => {
      const now = Date.parse("2026-01-01T00:00:00Z");
      const store = open(() => now);
      for (const id of ["a", "b", "c"]) {
        await store.reserveCreate();
        await store.recordCreated(request, id, job(id, "triggered"));
      }
      const listing = await store.recent(2);
      expect(listing.entries.map((e) => e.job_id)).toEqual(["c", "b"]);
      expect(listing.total).toBe(3);
      expect(listing.budget.used).toBe(3);
      expect((await store.list()).map((e) => e.job_id)).toEqual(["c", "b", "a"]);
      expect(store.takeWarnings()).toEqual([]);
    });

    it("reuses a completed job of any creator while its URL or file holds; a lost one only by its file on disk", async () => {
      let now = Date.parse("2026-01-01T00:10:00Z");
      const alice = open(() => now);
      const bob = open(() => now);
      await alice.recordCreated(request, "k", job("j1", "triggered"), "alice");
      expect(await bob.findReusable("k")).toBeUndefined();
      await alice.updateJob(
        job("j1", "completed", {
          download_url_expires_at: new Date(now + 3_600_000).toISOString(),
        }),
      );
      expect((await bob.findReusable("k"))?.job_id).toBe("j1");
      expect(await bob.findReusable("other")).toBeUndefined();
      // Past the URL's validity, without a file: a new job is needed.
      now += 2 * 3_600_000;
      expect(await bob.findReusable("k")).toBeUndefined();
      // With the file on disk and a range that had ended before the job: reused.
      const path = join(dir, "j1.csv");
      await writeFile(path, "x");
      await alice.recordDownload("j1", path, 1);
      const created = Date.parse("2026-01-01T00:00:00Z");
      expect((await bob.findReusable("k", { rangeEndsAt: created - 1 }))?.job_id).toBe("j1");
      expect(await bob.findReusable("k", { rangeEndsAt: created + 1 })).toBeUndefined();
      await bob.markLost("j1");
      expect((await alice.get("j1"))?.lost_at).toBeDefined();
      // Completed with its file on disk is final, whether or not the service still knows it.
      expect((await alice.findReusable("k", { rangeEndsAt: created - 1 }))?.job_id).toBe("j1");
      await rm(path);
      expect(await alice.findReusable("k", { rangeEndsAt: created - 1 })).toBeUndefined();
    });

    it("never lets parallel reservations of several openers exceed the budget", async () => {
      const now = Date.parse("2026-01-01T00:00:00Z");
      const stores = [open(() => now), open(() => now), open(() => now)];
      const results = await Promise.all(
        Array.from({ length: 24 }, (_, i) => stores[i % 3]?.reserveCreate()),
      );
      expect(results.filter((r) => r?.reserved).length).toBe(10);
      const refused = results.find((r) => r !== undefined && !r.reserved);
      expect(refused?.status.nextSlotAt).toBe(now + 600_000);
      expect((await stores[0]?.budgetStatus())?.used).toBe(10);
    });

    it("opens a slot when the oldest call leaves the window", async () => {
      let now = Date.parse("2026-01-01T00:00:00Z");
      const store = open(() => now, { count: 2, windowSeconds: 60 });
      expect((await store.reserveCreate()).reserved).toBe(true);
      now += 10_000;
      expect((await store.reserveCreate()).reserved).toBe(true);
      const refused = await store.reserveCreate();
      expect(refused.reserved).toBe(false);
      expect(refused.status.nextSlotAt).toBe(now - 10_000 + 60_000);
      now += 50_001;
      expect((await store.reserveCreate()).reserved).toBe(true);
    });

    it("gives a refused creation's slot back to every opener, one stamp per refund", async () => {
      let now = Date.parse("2026-01-01T00:00:00Z");
      const alice = open(() => now, { count: 2, windowSeconds: 60 });
      const bob = open(() => now, { count: 2, windowSeconds: 60 });
      const first = await alice.reserveCreate();
      // Two creations stamped in the same millisecond: a refund gives back one of them only.
      const second = await bob.reserveCreate();
      if (!first.reserved || !second.reserved) throw new Error("both should be reserved");
      expect(second.at).toBe(first.at);
      expect((await bob.reserveCreate()).reserved).toBe(false);
      await alice.refundCreate(first);
      const status = await bob.budgetStatus();
      expect(status.used).toBe(1);
      expect(status.allowed).toBe(true);
      now += 10_000;
      const third = await bob.reserveCreate();
      expect(third.reserved).toBe(true);
      expect((await alice.reserveCreate()).reserved).toBe(false);
      // A slot that has left the window meanwhile: nothing else is taken back with it.
      now += 50_001;
      await alice.refundCreate(second);
      expect((await alice.budgetStatus()).used).toBe(1);
    });

    it("never overdraws the budget when refunds and reservations of several openers interleave", async () => {
      const now = Date.parse("2026-01-01T00:00:00Z");
      const stores = [open(() => now), open(() => now), open(() => now)];
      const held = await Promise.all(
        Array.from({ length: 10 }, (_, i) => stores[i % 3]?.reserveCreate()),
      );
      const granted = held.filter((r) => r?.reserved === true);
      expect(granted).toHaveLength(10);
      const [, racing] = await Promise.all([
        Promise.all(granted.slice(0, 4).map((r, i) => stores[i % 3]?.refundCreate(r))),
        Promise.all(Array.from({ length: 8 }, (_, i) => stores[(i + 1) % 3]?.reserveCreate())),
      ]);
      const won = racing.filter((r) => r?.reserved).length;
      expect(won).toBeLessThanOrEqual(4);
      expect((await stores[0]?.budgetStatus())?.used).toBe(6 + won);
      let more = 0;
      while ((await stores[2]?.reserveCreate())?.reserved === true) more += 1;
      expect(won + more).toBe(4);
      expect((await stores[1]?.budgetStatus())?.used).toBe(10);
    });

    it("holds back creations while the service's 429 lasts", async () => {
      let now = Date.parse("2026-01-01T00:00:00Z");
      const store = open(() => now);
      await store.recordRateLimit(30_000);
      const blocked = await store.reserveCreate();
      expect(blocked.reserved).toBe(false);
      expect(blocked.status.serverRateLimited).toBe(true);
      expect(blocked.status.nextSlotAt).toBe(now + 30_000);
      // A shorter later hint does not shorten the block.
      await store.recordRateLimit(1000);
      expect((await store.budgetStatus()).nextSlotAt).toBe(now + 30_000);
      now += 30_001;
      expect((await store.reserveCreate()).reserved).toBe(true);
    });

    it("gives a job's download lease to one holder at a time, until it ends or expires", async () => {
      let now = Date.parse("2026-01-01T00:00:00Z");
      const a = open(() => now);
      const b = open(() => now);
      const attempts = await Promise.all([
        a.acquireDownloadLease("j1", "A", 60_000),
        b.acquireDownloadLease("j1", "B", 60_000),
      ]);
      expect(attempts.filter(Boolean).length).toBe(1);
      const [holder, other] = attempts[0] ? (["A", b] as const) : (["B", a] as const);
      const otherName = holder === "A" ? "B" : "A";
      const holderStore = holder === "A" ? a : b;
      // Another job's lease is independent; the holder may renew its own.
      expect(await other.acquireDownloadLease("j2", otherName, 60_000)).toBe(true);
      expect(await holderStore.acquireDownloadLease("j1", holder, 60_000)).toBe(true);
      now += 59_000;
      expect(await other.acquireDownloadLease("j1", otherName, 60_000)).toBe(false);
      // Releasing someone else's lease does nothing.
      await other.releaseDownloadLease("j1", otherName);
      expect(await other.acquireDownloadLease("j1", otherName, 60_000)).toBe(false);
      await holderStore.releaseDownloadLease("j1", holder);
      expect(await other.acquireDownloadLease("j1", otherName, 60_000)).toBe(true);
      // A holder that died: its lease expires on its own.
      now += 60_001;
      expect(await holderStore.acquireDownloadLease("j1", holder, 60_000)).toBe(true);
    });

    it("takes over at once a lease whose holder is gone, and only that one", async () => {
      const now = Date.parse("2026-01-01T00:00:00Z");
      const a = open(() => now);
      const b = open(() => now);
      expect(await a.acquireDownloadLease("j1", "A", 60_000)).toBe(true);
      // A holder judged alive keeps its lease until it expires.
      expect(await b.acquireDownloadLease("j1", "B", 60_000, (h) => h !== "A")).toBe(false);
      expect(await b.acquireDownloadLease("j1", "B", 60_000, (h) => h === "A")).toBe(true);
      // Now B holds it: A, come back, cannot take it while B is alive.
      expect(await a.acquireDownloadLease("j1", "A", 60_000, (h) => h === "A")).toBe(false);
      await b.releaseDownloadLease("j1", "B");
      expect(await a.acquireDownloadLease("j1", "A", 60_000)).toBe(true);
    });

    it("lists only downloaded files still on disk", async () => {
      const now = Date.parse("2026-01-01T00:00:00Z");
      const store = open(() => now);
      await store.recordCreated(request, "k1", job("here", "completed"));
      await store.recordCreated(request, "k2", job("gone", "completed"));
      const path = join(dir, "here.csv");
      await writeFile(path, "x");
      await store.recordDownload("here", path, 1);
      await store.recordDownload("gone", join(dir, "gone.csv"), 1);
      expect((await store.downloadedFiles()).map((e) => e.job_id)).toEqual(["here"]);
    });

    it("marks files the retention sweep removed, once, until downloaded again", async () => {
      const now = Date.parse("2026-01-01T00:00:00Z");
      const store = open(() => now);
      await store.recordCreated(request, "k1", job("old", "completed"));
      const path = join(dir, "old.csv");
      await store.recordDownload("old", path, 1);
      expect(await store.markFilesRemoved([{ path, reason: "age" }])).toBe(1);
      expect(await store.markFilesRemoved([{ path, reason: "size" }])).toBe(0);
      const entry = await open(() => now).get("old");
      expect(entry?.file_removed_reason).toBe("age");
      expect(entry?.file_path).toBe(path);
      await store.recordDownload("old", path, 2);
      expect((await store.get("old"))?.file_removed_at).toBeUndefined();
    });

    describe("pending creations (claims)", () => {
      const now = () => Date.parse("2026-01-01T00:00:00Z");
      const elsewhere = (token: string, renewal = 0): ClaimOwner => ({
        pid: 4242,
        host: "another-host.invalid",
        token,
        renewal,
      });

      it("grants one claim per request key across openers until released", async () => {
        const first = open(now);
        const second = open(now);
        const mine = newClaimOwner();
        const unhold = holdClaim(mine);
        try {
          expect(await first.claimCreate("k1", mine)).toEqual({ claimed: true });
          // The holder asking again keeps it; another key is free.
          expect(await first.claimCreate("k1", mine)).toEqual({ claimed: true });
          const other = newClaimOwner();
          expect(await second.claimCreate("k2", other)).toEqual({ claimed: true });
          const refused = await second.claimCreate("k1", elsewhere("b"));
          expect(refused).toEqual({ claimed: false, holder: mine });
          await first.releaseCreateClaim("k1", elsewhere("not-the-holder"));
          expect((await second.claimCreate("k1", elsewhere("b"))).claimed).toBe(false);
          await first.releaseCreateClaim("k1", mine);
          expect(await second.claimCreate("k1", elsewhere("b"))).toEqual({ claimed: true });
        } finally {
          unhold();
        }
      });

      it("takes over at once the claim of a process on this host that is gone", async () => {
        const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
        await new Promise((resolve) => child.once("exit", resolve));
        const dead: ClaimOwner = { pid: child.pid ?? 0, host: hostname(), token: "d", renewal: 0 };
        const first = open(now);
        expect(await first.claimCreate("k1", dead)).toEqual({ claimed: true });
        // The first look already decides: no lease to wait out, no clock asked.
        const second = open(now, budget, () => 0);
        expect(await second.claimCreate("k1", elsewhere("b"))).toEqual({ claimed: true });
      });

      it("takes over a claim from another host once renewals stop for the lease, or after the bound", async () => {
        let t = 0;
        const first = open(now);
        const observer = open(now, budget, () => t);
        const holder = elsewhere("h");
        expect(await first.claimCreate("k1", holder)).toEqual({ claimed: true });
        expect((await observer.claimCreate("k1", elsewhere("o"))).claimed).toBe(false);
        t += CLAIM_LEASE_MS - 1;
        expect((await observer.claimCreate("k1", elsewhere("o"))).claimed).toBe(false);
        // Renewed: the lease starts over from when the observer saw the renewal.
        holder.renewal += 1;
        await first.renewCreateClaim("k1", holder);
        expect((await observer.claimCreate("k1", elsewhere("o"))).claimed).toBe(false);
        t += CLAIM_LEASE_MS - 1;
        expect((await observer.claimCreate("k1", elsewhere("o"))).claimed).toBe(false);
        t += 2;
        expect(await observer.claimCreate("k1", elsewhere("o"))).toEqual({ claimed: true });

        // A claim renewed all along is still taken once it outlives the bound.
        const stuck = elsewhere("s");
        expect(await first.claimCreate("k2", stuck)).toEqual({ claimed: true });
        for (let waited = 0; waited <= CLAIM_MAX_MS; waited += CLAIM_LEASE_MS / 2) {
          expect((await observer.claimCreate("k2", elsewhere("o"))).claimed).toBe(false);
          stuck.renewal += 1;
          await first.renewCreateClaim("k2", stuck);
          t += CLAIM_LEASE_MS / 2;
        }
        expect(await observer.claimCreate("k2", elsewhere("o"))).toEqual({ claimed: true });
      });
    });
  });
}
