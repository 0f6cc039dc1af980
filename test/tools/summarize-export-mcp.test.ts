import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiClientOptionsFromConfig, createApiClient } from "../../src/api/client.js";
import { JobLedger, ledgerScope } from "../../src/ledger/ledger.js";
import { type Harness, startHarness } from "./harness.js";

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
    const ledger = new JobLedger(
      h.dataDir,
      h.config.exportBudget,
      Date.now,
      ledgerScope(h.config.baseUrl ?? "", h.config.applicationId),
    );
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
        created_at: new Date().toISOString(),
        updated_at: new Date().toISOString(),
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
      for (let i = 0; i < 100; i++) {
        if ((await api.getExportJob(id)).status === "completed") break;
        await new Promise((r) => setTimeout(r, 50));
      }
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
