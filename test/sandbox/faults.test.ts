import { describe, expect, it } from "vitest";
import { must } from "../helpers/must.js";
import { client, manualClock, sandboxForFile, sandboxForTest } from "./support.js";

// Fault injection (issue 3, item 6): injected statuses, delays, dropped connections, cut downloads.
const sandbox = await sandboxForFile();
const api = client(sandbox);
const slot = must(
  sandbox.world.slots.find((s) => s.state === "active" && s.warmupMs === 0)?.key,
  "active slot without a warm-up",
);
const campaignId = sandbox.world.campaigns.find(
  (c) => c.role === "normal" && c.tasks.some((t) => t.aggregated),
)?._id;
const METRICS = { task_from: "2024-06-01", task_to: "2024-06-02" };

describe("fault injection", () => {
  it("answers injected statuses for the given number of requests, then normally", async () => {
    sandbox.faults.inject({
      operation: "recommend",
      action: { type: "status", status: 502 },
      times: 2,
    });
    sandbox.faults.inject({
      operation: "campaign_metrics",
      action: { type: "status", status: 429, retryAfter: "7" },
    });
    sandbox.faults.inject({ operation: "get_export_job", action: { type: "status", status: 500 } });
    sandbox.faults.inject({
      operation: "create_export_job",
      action: { type: "status", status: 503 },
    });
    expect((await api.recommend(slot, {})).status).toBe(502);
    expect((await api.recommend(slot, {})).status).toBe(502);
    expect((await api.recommend(slot, {})).status).toBe(200);
    const limited = await api.metrics(METRICS);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("7");
    expect((await api.metrics(METRICS)).status).toBe(200);
    expect((await api.getJob("abc")).status).toBe(500);
    expect(
      (await api.createJob({ type: "campaign_event_data", campaign_id: campaignId })).status,
    ).toBe(503);
    sandbox.faults.inject({ operation: "recommend", action: { type: "status", status: 412 } });
    expect((await api.recommend(slot, {})).status).toBe(412);
  });

  it("counts requests per operation, faulted ones included", async () => {
    const before = sandbox.faults.requestCounts.campaign_metrics;
    sandbox.faults.inject({
      operation: "campaign_metrics",
      action: { type: "status", status: 500 },
    });
    await api.metrics(METRICS);
    await api.metrics(METRICS);
    expect(sandbox.faults.requestCounts.campaign_metrics).toBe(before + 2);
  });

  it("delays an answer", async () => {
    sandbox.faults.inject({ operation: "recommend", action: { type: "delay", ms: 300 } });
    const started = Date.now();
    expect((await api.recommend(slot, {})).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it("drops the connection after processing a create (the creation counts)", async () => {
    // Its own sandbox and clock: the 10-per-10-minutes window shows the dropped create counted.
    const own = manualClock();
    const fresh = await sandboxForTest({ clock: own.read });
    const freshApi = client(fresh);
    const body = { type: "campaign_event_data", campaign_id: campaignId };
    for (let i = 0; i < 9; i += 1) expect((await freshApi.createJob(body)).status).toBe(200);
    fresh.faults.inject({ operation: "create_export_job", action: { type: "drop" } });
    await expect(freshApi.createJob(body)).rejects.toThrow();
    expect(fresh.faults.requestCounts.create_export_job).toBe(10);
    const eleventh = await freshApi.createJob(body);
    expect(eleventh.status).toBe(429);
  });

  it("refuses a truncate rule for anything but downloads", () => {
    expect(() =>
      sandbox.faults.inject({
        operation: "get_export_job",
        action: { type: "truncate", bytes: 10 },
      }),
    ).toThrow(/downloads only/);
    sandbox.faults.inject({ operation: "download", action: { type: "truncate", bytes: 10 } });
    sandbox.faults.clear();
  });

  it("cuts a download short after the headers promised the full length", async () => {
    const job = await api.exportFile({ type: "campaign_event_data", campaign_id: campaignId });
    const size = Number(job.file_size);
    expect(size).toBeGreaterThan(100);
    sandbox.faults.inject({ operation: "download", action: { type: "truncate", bytes: 100 } });
    const res = await fetch(String(job.download_url));
    expect(res.status).toBe(200);
    expect(Number(res.headers.get("content-length"))).toBe(size);
    await expect(res.arrayBuffer()).rejects.toThrow();
    // Cleared rules leave downloads whole.
    sandbox.faults.inject({ operation: "download", action: { type: "status", status: 500 } });
    sandbox.faults.clear();
    const whole = await fetch(String(job.download_url));
    expect((await whole.arrayBuffer()).byteLength).toBe(size);
  });
});
