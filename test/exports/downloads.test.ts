import { existsSync, statSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiClient } from "../../src/api/client.js";
import { createServer } from "../../src/server.js";
import {
  type Harness,
  openLedger,
  sandboxClock,
  startHarness,
  toResult,
} from "../helpers/tool-harness.js";
import { waitUntil } from "../helpers/wait-until.js";

/**
 * Downloads that outlast a tool call: the file of a completed job downloads in the background,
 * calls wait for it within their budget, and a slow link (the sandbox's throttle fault) shows
 * "downloading" with the bytes so far.
 */

/** Seconds a throttled download takes in these tests: well beyond the short waits used. */
const DOWNLOAD_SECONDS = 2;

let h: Harness;
let campaignIds: string[];
beforeAll(async () => {
  h = await startHarness({ env: { CRM_EXPORT_BUDGET: "20/600" } });
  // Campaigns of one round: files of some hundred KB, quick to throttle to a few seconds.
  campaignIds = h.sandbox.world.campaigns
    .filter((c) => c.role === "normal" && c.tasks.length === 1 && c.tasks.some((t) => t.aggregated))
    .map((c) => c._id);
});
afterAll(async () => {
  await h?.close();
});

const downloads = () => h.sandbox.faults.requestCounts.download;

/**
 * A job of a campaign that is completed on the service but not downloaded yet, with its size
 * as the service reports it (read with our own client, not through the tools).
 */
async function completedJob(index: number): Promise<{ id: string; size: number }> {
  const campaignId = campaignIds[index];
  if (campaignId === undefined) throw new Error("not enough one-round campaigns in the sandbox");
  const r = await h.call("start_export", {
    type: "campaign_event_data",
    campaign_id: campaignId,
    wait_seconds: 0,
  });
  expect(r.isError).toBeFalsy();
  const id = (r.structured.job as { _id: string })._id;
  const api = createApiClient({
    baseUrl: h.sandbox.base_url,
    realtimeBaseUrl: h.sandbox.realtime_base_url,
    applicationId: h.sandbox.application_id,
    secretKey: h.sandbox.secret_key,
    recommendSecretKey: h.sandbox.recommend_secret_key,
    dataDir: h.dataDir,
  });
  try {
    let size: number | undefined;
    await waitUntil(
      async () => {
        const job = await api.getExportJob(id);
        size = job.status === "completed" ? (job.file_size ?? 0) : undefined;
        return size !== undefined;
      },
      `export job ${id} to complete`,
      { intervalMs: 100 },
    );
    expect(size).toBeGreaterThan(100_000);
    return { id, size: size ?? 0 };
  } finally {
    await api.close();
  }
}

function throttleNextDownload(size: number): void {
  h.sandbox.faults.inject({
    operation: "download",
    action: { type: "throttle", bytesPerSecond: Math.ceil(size / DOWNLOAD_SECONDS) },
  });
}

describe("a download slower than the call", () => {
  it('returns "downloading" with bytes and next_step; check_export finishes the same download', async () => {
    const { id, size } = await completedJob(0);
    throttleNextDownload(size);
    const before = downloads();
    const progress: Array<{ progress: number; message: string }> = [];
    const raw = await h.client.callTool(
      { name: "check_export", arguments: { job_id: id, wait_seconds: 0.8 } },
      {
        onprogress: (p: { progress: number; message?: string }) =>
          progress.push({ progress: p.progress, message: String(p.message) }),
      },
    );
    const r = toResult(raw);
    expect(r.isError).toBeFalsy();
    expect(r.structured.status).toBe("downloading");
    expect((r.structured.job as { status: string }).status).toBe("completed");
    expect(r.structured.done).toBe(false);
    expect(r.structured.file_path).toBeUndefined();
    const got = r.structured.download_progress as { bytes: number; total_bytes: number };
    expect(got.total_bytes).toBe(size);
    // About 40% of the file in 0.8 of 2 seconds; at least some and surely not all of it.
    expect(got.bytes).toBeGreaterThan(0);
    expect(got.bytes).toBeLessThan(size);
    const next = `check_export {"job_id":"${id}","wait_seconds":30}`;
    expect(r.structured.next_step).toBe(next);
    expect(r.text).toContain(next);
    expect(r.text).toContain("downloading");

    // Progress: byte counts that increase, with the size in MB in the message.
    const bytes = progress.filter((p) => p.message.includes(" MB"));
    expect(bytes.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < bytes.length; i++) {
      expect(bytes[i]?.progress ?? 0).toBeGreaterThan(bytes[i - 1]?.progress ?? 0);
    }
    expect(bytes.at(-1)?.message).toContain(`of ${(size / 1024 / 1024).toFixed(1)} MB`);
    expect(bytes.at(-1)?.progress).toBeLessThanOrEqual(got.bytes);

    const done = await h.call("check_export", { job_id: id, wait_seconds: 10 });
    expect(done.isError).toBeFalsy();
    expect(done.structured.status).toBe("completed");
    const path = String(done.structured.file_path);
    expect(statSync(path).size).toBe(size);
    expect(done.structured.next_step).toBe(`summarize_export {"job_id":"${id}"}`);
    // The same download finished: the sandbox saw one download request, not two.
    expect(downloads() - before).toBe(1);
  });

  it("cancelling the call stops its wait, not the download", async () => {
    const { id, size } = await completedJob(1);
    throttleNextDownload(size);
    const before = downloads();
    const controller = new AbortController();
    const started = Date.now();
    // Cancelled once the download has reported bytes: mid-download.
    const pending = h.client.callTool(
      { name: "check_export", arguments: { job_id: id, wait_seconds: 20 } },
      {
        signal: controller.signal,
        onprogress: (p: { message?: string }) => {
          if (p.message?.includes(" MB") === true) controller.abort();
        },
      },
    );
    await expect(pending).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(DOWNLOAD_SECONDS * 1000);
    // Nobody waits now; the download must still complete and be recorded in the ledger.
    const ledger = openLedger(h);
    let entry = await ledger.get(id);
    await waitUntil(
      async () => {
        entry = await ledger.get(id);
        return entry?.file_path !== undefined;
      },
      "the background download to be recorded in the ledger",
      { intervalMs: 50 },
    );
    expect(statSync(String(entry?.file_path)).size).toBe(size);
    const done = await h.call("check_export", { job_id: id, wait_seconds: 0 });
    expect(done.structured.file_path).toBe(entry?.file_path);
    expect(downloads() - before).toBe(1);
  });

  it("summarize_export with job_id joins the running download", async () => {
    const { id, size } = await completedJob(2);
    throttleNextDownload(size);
    const before = downloads();
    const started = await h.call("check_export", { job_id: id, wait_seconds: 0 });
    expect(started.structured.status).toBe("downloading");
    const summary = await h.call("summarize_export", { job_id: id });
    expect(summary.isError).toBeFalsy();
    expect(statSync(String(summary.structured.file_path)).size).toBe(size);
    expect(downloads() - before).toBe(1);
  });
});

describe("concurrent calls", () => {
  it("share one download of the same job", async () => {
    const { id, size } = await completedJob(5);
    // About one second: long enough for the second call to find the first one's download.
    throttleNextDownload(size * DOWNLOAD_SECONDS);
    const before = downloads();
    const [a, b] = await Promise.all([
      h.call("check_export", { job_id: id, wait_seconds: 5 }),
      h.call("check_export", { job_id: id, wait_seconds: 5 }),
    ]);
    expect(a.structured.file_path).toBeDefined();
    expect(b.structured.file_path).toBe(a.structured.file_path);
    expect(statSync(String(a.structured.file_path)).size).toBe(size);
    expect(downloads() - before).toBe(1);
  });
});

describe("a download that fails while nobody waits", () => {
  it("is reported by the next call, which retries it", async () => {
    const { id, size } = await completedJob(3);
    h.sandbox.faults.inject({ operation: "download", action: { type: "truncate", bytes: 1000 } });
    const before = downloads();
    const first = await h.call("check_export", { job_id: id, wait_seconds: 0 });
    expect(first.structured.status).toBe("downloading");
    // The cut download fails in the background after the call returned.
    const manager = h.runtime.downloads;
    await manager.get(id)?.done.catch(() => undefined);
    expect(manager.get(id)).toBeUndefined();
    const again = await h.call("check_export", { job_id: id, wait_seconds: 10 });
    expect(again.isError).toBeFalsy();
    // A cut connection: the client sees the socket close before the announced size arrived.
    const earlier = String(again.structured.earlier_download_error);
    expect(earlier).toMatch(/earlier background download.*connection closed/);
    expect(again.text).toContain(earlier);
    expect(statSync(String(again.structured.file_path)).size).toBe(size);
    expect(downloads() - before).toBe(2);
    // Reported once: the following call has nothing earlier to report.
    const third = await h.call("check_export", { job_id: id, wait_seconds: 0 });
    expect(third.structured.earlier_download_error).toBeUndefined();
    expect(downloads() - before).toBe(2);
  });
});

describe("server close", () => {
  it("aborts a running download and leaves no partial file", async () => {
    const { id, size } = await completedJob(4);
    throttleNextDownload(size);
    // A server of its own on its own data folder, so closing it leaves the harness running.
    const dataDir = await mkdtemp(join(tmpdir(), "crm-downloads-"));
    try {
      const config = { ...h.config, dataDir };
      // The sandbox's pinned clock judges its download URLs; the real clock would call them expired.
      const clock = sandboxClock();
      const api = createApiClient({
        baseUrl: h.sandbox.base_url,
        realtimeBaseUrl: h.sandbox.realtime_base_url,
        applicationId: h.sandbox.application_id,
        secretKey: h.sandbox.secret_key,
        recommendSecretKey: h.sandbox.recommend_secret_key,
        dataDir,
        now: clock.now,
      });
      const built = createServer(config, { api, now: clock.now });
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      const client = new Client({ name: "test", version: "1.0.0" });
      await built.server.connect(serverSide);
      await client.connect(clientSide);
      const before = downloads();
      const r = toResult(
        await client.callTool({
          name: "check_export",
          arguments: { job_id: id, wait_seconds: 0.6 },
        }),
      );
      expect(r.structured.status).toBe("downloading");
      const exportsDir = join(dataDir, "exports");
      // Mid-download: the partial file exists under its temporary name.
      expect((await readdir(exportsDir)).some((n) => n.endsWith(".part"))).toBe(true);
      const download = built.runtime.downloads.get(id);
      expect(download?.state).toBe("running");
      const closing = Date.now();
      await client.close();
      await built.close();
      await api.close();
      expect(Date.now() - closing).toBeLessThan(800);
      expect(await readdir(exportsDir)).toEqual([]);
      // Nothing finishes later either: the download itself ended, cut short.
      await expect(download?.done).rejects.toThrow();
      expect(download?.state).toBe("failed");
      expect(await readdir(exportsDir)).toEqual([]);
      expect(downloads() - before).toBe(1);
      expect(existsSync(exportsDir)).toBe(true);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
