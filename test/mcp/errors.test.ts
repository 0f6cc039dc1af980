import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/index.js";
import type { RunningSandbox } from "../../src/sandbox/types.js";
import { must } from "../helpers/must.js";
import { type Harness, SANDBOX_NOW, sandboxClock, startHarness } from "../helpers/tool-harness.js";

let h: Harness;
let sandbox: RunningSandbox;
let offsetMs = 0;
// The sandbox's own time (its pinned date), shifted together: the real date must not matter.
const clock = sandboxClock(() => offsetMs);

beforeAll(async () => {
  sandbox = await startSandbox({ now: SANDBOX_NOW, jobSeconds: 0.3, clock: clock.real });
  h = await startHarness({ sandbox, apiNow: clock.now, env: { CRM_EXPORT_BUDGET: "8/600" } });
});
afterAll(async () => {
  await h?.close();
  await sandbox?.close();
});

const byRole = (role: string) =>
  must(
    sandbox.world.campaigns.find((c) => c.role === role),
    `campaign of role ${role}`,
  )._id;

describe("API error paths become isError results with the next step", () => {
  it("LimitExceeded says to narrow the period and split", async () => {
    const r = await h.call("start_export", {
      type: "campaign_event_data",
      campaign_id: byRole("huge_sends"),
    });
    expect(r.isError).toBe(true);
    expect(r.text).toContain("shorter from/to ranges");
    expect(r.text).toContain("split");
    // No range was given: concrete ranges ending today by the sandbox's clock (2026-11-22 KST).
    expect(r.text).toContain('"from":"2026-10-24","to":"2026-11-22"');
  });

  it("ResourceNotReady says to retry after aggregation", async () => {
    const r = await h.call("start_export", {
      type: "campaign_event_data",
      campaign_id: byRole("not_ready"),
    });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/Retry after aggregation/i);
    expect(r.text).toContain(
      `campaign_metrics {"campaign_ids":["${byRole("not_ready")}"],"include_tasks":true`,
    );
  });

  it("a failed job says to create a new one with force", async () => {
    const r = await h.call("start_export", {
      type: "campaign_event_data",
      campaign_id: byRole("failing_export"),
      wait_seconds: 10,
    });
    expect(r.isError).toBe(true);
    expect(r.text).toContain("failed");
    expect(r.text).toContain('"force": true');
  });

  it("an expired download URL says to create a new job", async () => {
    const normal = sandbox.world.campaigns.find(
      (c) => c.role === "normal" && c.tasks.length === 1,
    )?._id;
    const started = await h.call("start_export", {
      type: "campaign_event_data",
      campaign_id: normal,
      from: "2026-06-01",
      wait_seconds: 0,
    });
    const jobId = (started.structured.job as { _id: string })._id;
    // First read after completion issues the URL (valid 24 h from then) and downloads the file;
    // with the file gone and the clock 25 h on, only a new job can help.
    const done = await h.call("check_export", { job_id: jobId, wait_seconds: 10 });
    expect(done.isError).toBeFalsy();
    await rm(done.structured.file_path as string);
    offsetMs = 25 * 3600 * 1000;
    try {
      const r = await h.call("check_export", { job_id: jobId, wait_seconds: 5 });
      expect(r.isError).toBe(true);
      expect(r.text).toContain("expired");
      expect(r.text).toContain("start_export");
    } finally {
      offsetMs = 0;
    }
  });

  it("a server 429 gives the time of the next slot, and the local budget then refuses early", async () => {
    sandbox.faults.inject({
      operation: "create_export_job",
      action: { type: "status", status: 429, retryAfter: "120" },
    });
    const scenario = sandbox.world.scenarios[0]?._id;
    const args = {
      type: "scenario_daily_metrics",
      scenario_id: scenario,
      from: "2026-11-01",
      to: "2026-11-02",
      wait_seconds: 0,
    };
    const r = await h.call("start_export", args);
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/next creation is possible at \d{4}-\d{2}-\d{2}T/);
    const before = sandbox.faults.requestCounts.create_export_job;
    const again = await h.call("start_export", args);
    expect(again.isError).toBe(true);
    expect(again.text).toContain("429");
    expect(sandbox.faults.requestCounts.create_export_job).toBe(before);
  });

  it("412 and 502 on recommend say to retry shortly", async () => {
    sandbox.faults.inject({
      operation: "recommend",
      action: { type: "status", status: 412 },
      times: 10,
    });
    const r = await h.call("recommend_products", { slot_key: "best_sellers" });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/not ready/i);
    sandbox.faults.clear();
    sandbox.faults.inject({
      operation: "recommend",
      action: { type: "status", status: 502 },
      times: 10,
    });
    const e = await h.call("recommend_products", { slot_key: "best_sellers" });
    expect(e.isError).toBe(true);
    expect(e.text).toMatch(/retry shortly/i);
    sandbox.faults.clear();
  });

  it("500 on metrics says to retry shortly; an unknown slot says to check slot_key", async () => {
    sandbox.faults.inject({
      operation: "campaign_metrics",
      action: { type: "status", status: 500 },
      times: 10,
    });
    const r = await h.call("campaign_metrics", {});
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/retry shortly/i);
    sandbox.faults.clear();
    const slot = await h.call("recommend_products", { slot_key: "summer_banner_old" });
    expect(slot.isError).toBe(true);
    expect(slot.text).toContain("slot_key");
  });
});

describe("authentication errors name the variable to check, never the key", () => {
  it("wrong export key -> CRM_SECRET_KEY; wrong recommend key -> CRM_RECOMMEND_SECRET_KEY", async () => {
    const canary = "canary-key-0123456789";
    const bad = await startHarness({
      sandbox,
      apiNow: clock.now,
      env: { CRM_SECRET_KEY: canary, CRM_RECOMMEND_SECRET_KEY: `${canary}-rec` },
    });
    try {
      const m = await bad.call("campaign_metrics", {});
      expect(m.isError).toBe(true);
      expect(m.text).toContain("CRM_SECRET_KEY");
      expect(m.text).not.toContain(canary);
      const rec = await bad.call("recommend_products", { slot_key: "best_sellers" });
      expect(rec.isError).toBe(true);
      expect(rec.text).toContain("CRM_RECOMMEND_SECRET_KEY");
      expect(rec.text).not.toContain(canary);
    } finally {
      await bad.close();
    }
  });
});

describe("local export budget", () => {
  it("refuses early once N creations happened in the window, saying when a slot opens", async () => {
    const small = await startHarness({
      sandbox,
      apiNow: clock.now,
      env: { CRM_EXPORT_BUDGET: "2/600" },
    });
    try {
      const scenario = sandbox.world.scenarios[1]?._id;
      for (const day of ["2026-11-03", "2026-11-04"]) {
        const ok = await small.call("start_export", {
          type: "scenario_daily_metrics",
          scenario_id: scenario,
          from: day,
          to: day,
          wait_seconds: 0,
        });
        expect(ok.isError).toBeFalsy();
      }
      const before = sandbox.faults.requestCounts.create_export_job;
      const refused = await small.call("start_export", {
        type: "scenario_daily_metrics",
        scenario_id: scenario,
        from: "2026-11-05",
        to: "2026-11-05",
        wait_seconds: 0,
      });
      expect(refused.isError).toBe(true);
      expect(refused.text).toContain("2 of 2");
      expect(refused.text).toMatch(/next creation is possible at \d{4}-/);
      expect(sandbox.faults.requestCounts.create_export_job).toBe(before);
    } finally {
      await small.close();
    }
  });
});
