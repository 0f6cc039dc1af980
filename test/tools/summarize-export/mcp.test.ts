import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiClient } from "../../../src/api/client.js";
import { apiClientOptionsFromConfig } from "../../../src/config.js";
import { type Harness, openLedger, SANDBOX_NOW, startHarness } from "../../helpers/tool-harness.js";
import { waitUntil } from "../../helpers/wait-until.js";

/** When the hand-made ledger entries below were created: the sandbox's "now", not today. */
const CREATED_AT = new Date(Date.parse(SANDBOX_NOW)).toISOString();

/** summarize_export through the MCP client: unknown jobs and refused arguments. */

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

describe("summarize_export over MCP", () => {
  it("a job_id the service does not know is named in the error", async () => {
    const r = await h.call("summarize_export", { job_id: "exp_never_made" });
    expect(r.isError).toBe(true);
    expect(r.text).toContain("export job exp_never_made was not found");
  });

  it("a ledger job the service lost is marked lost", async () => {
    const ledger = openLedger(h);
    const campaignId = "cmp_gone";
    await ledger.recordCreated(
      { type: "campaign_event_data", campaign_id: campaignId },
      ["campaign_event_data", campaignId, "", ""].join("|"),
      {
        _id: "exp_lost_job",
        application_id: h.sandbox.application_id,
        type: "campaign_event_data",
        status: "completed",
        campaign_id: campaignId,
        created_at: CREATED_AT,
        updated_at: CREATED_AT,
      },
    );
    const r = await h.call("summarize_export", { job_id: "exp_lost_job" });
    expect(r.isError).toBe(true);
    expect(r.text).toContain("export job exp_lost_job was not found");
    const list = await h.call("check_export", {});
    const jobs = list.structured.jobs as Array<{ job_id: string; status: string }>;
    expect(jobs.find((j) => j.job_id === "exp_lost_job")?.status).toBe("lost");
  });

  it("a misspelled argument is refused by name", async () => {
    const r = await h.call("summarize_export", { jobid: "exp_1" });
    expect(r.isError).toBe(true);
    expect(r.text).toContain("jobid");
    expect(r.text).toMatch(/unrecognized|unknown/i);
  });

  it("a failed download names the job and the exact call that retries it", async () => {
    const campaign = h.sandbox.world.campaigns.find(
      (c) => c.role === "normal" && c.tasks.some((t) => t.aggregated),
    );
    if (campaign === undefined) throw new Error("no normal campaign in the sandbox world");
    const started = await h.call("start_export", {
      type: "campaign_event_data",
      campaign_id: campaign._id,
      wait_seconds: 0,
    });
    const id = (started.structured.job as { _id: string })._id;
    // Completed on the service, not yet downloaded here.
    const api = createApiClient(apiClientOptionsFromConfig(h.config));
    try {
      await waitUntil(
        async () => (await api.getExportJob(id)).status === "completed",
        `export job ${id} to complete`,
        { intervalMs: 50 },
      );
    } finally {
      await api.close();
    }
    h.sandbox.faults.inject({
      operation: "download",
      action: { type: "status", status: 500 },
      times: 10,
    });
    const r = await h.call("summarize_export", { job_id: id });
    h.sandbox.faults.clear();
    expect(r.isError).toBe(true);
    expect(r.text).toContain(`check_export {"job_id":"${id}"}`);
  });
});

describe("a job the service lost stays lost", () => {
  let slow: Harness;
  beforeAll(async () => {
    // A long poll interval: the second call is throttled and could only use the ledger's copy.
    slow = await startHarness({ env: { CRM_POLL_INTERVAL_SECONDS: "5" } });
  });
  afterAll(async () => {
    await slow.close();
  });

  it("every later call says not found, with the exact call that recreates it", async () => {
    const ledger = openLedger(slow);
    const campaignId = "cmp_restarted";
    await ledger.recordCreated(
      {
        type: "campaign_event_data",
        campaign_id: campaignId,
        from: "2026-11-01T00:00:00+09:00",
        to: "2026-11-08T00:00:00+09:00",
      },
      ["campaign_event_data", campaignId, "2026-11-01", "2026-11-07"].join("|"),
      {
        _id: "exp_gone_running",
        application_id: slow.sandbox.application_id,
        type: "campaign_event_data",
        status: "triggered",
        campaign_id: campaignId,
        created_at: CREATED_AT,
        updated_at: CREATED_AT,
      },
    );
    const recreate = `start_export {"type":"campaign_event_data","campaign_id":"${campaignId}","from":"2026-11-01","to":"2026-11-07","force":true}`;
    const first = await slow.call("check_export", { job_id: "exp_gone_running", wait_seconds: 0 });
    const second = await slow.call("check_export", { job_id: "exp_gone_running", wait_seconds: 0 });
    const summary = await slow.call("summarize_export", { job_id: "exp_gone_running" });
    for (const r of [first, second, summary]) {
      expect(r.isError).toBe(true);
      expect(r.text).toContain("export job exp_gone_running was not found");
      expect(r.text).toContain(recreate);
      expect(r.text).not.toMatch(/Not finished yet|no file yet/);
    }
  });
});
