import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { must } from "../../helpers/must.js";
import { type Harness, openLedger, SANDBOX_NOW, startHarness } from "../../helpers/tool-harness.js";

let h: Harness;
let scenarioId: string;
let campaignId: string;
beforeAll(async () => {
  h = await startHarness({ env: { CRM_EXPORT_BUDGET: "10/600" } });
  scenarioId = must(h.sandbox.world.scenarios[0]?._id, "scenario");
  campaignId = must(
    h.sandbox.world.campaigns.find((c) => c.role === "normal" && c.tasks.length === 1)?._id,
    "normal campaign of one task",
  );
});
afterAll(async () => {
  await h?.close();
});

const scenarioArgs = (day: string, extra: Record<string, unknown> = {}) => ({
  type: "scenario_daily_metrics",
  scenario_id: scenarioId,
  from: day,
  to: day,
  ...extra,
});
const creates = () => h.sandbox.faults.requestCounts.create_export_job;

describe("after the job exists, failures keep the job in hand", () => {
  it("poll errors (HTTP 500 past the retries) give a normal result with the job and next_step", async () => {
    h.sandbox.faults.inject({
      operation: "get_export_job",
      action: { type: "status", status: 500 },
      times: 1000,
    });
    let r: Awaited<ReturnType<Harness["call"]>>;
    try {
      r = await h.call("start_export", scenarioArgs("2026-10-01", { wait_seconds: 2 }));
    } finally {
      h.sandbox.faults.clear();
    }
    expect(r.isError).toBeFalsy();
    const id = (r.structured.job as { _id: string })._id;
    expect(r.structured.error).toMatch(/HTTP 500/);
    expect(r.structured.next_step).toBe(`check_export {"job_id":"${id}","wait_seconds":30}`);
    expect(r.text).toContain(id);
    const done = await h.call("check_export", { job_id: id, wait_seconds: 10 });
    expect(done.isError).toBeFalsy();
    expect(String(done.structured.file_path)).toMatch(/\.xlsx$/);
  });

  it("a cut download names the job and the check_export call that retries it", async () => {
    h.sandbox.faults.inject({
      operation: "download",
      action: { type: "truncate", bytes: 10 },
      times: 10,
    });
    let r: Awaited<ReturnType<Harness["call"]>>;
    try {
      r = await h.call("start_export", scenarioArgs("2026-10-02", { wait_seconds: 10 }));
    } finally {
      h.sandbox.faults.clear();
    }
    expect(r.isError).toBeFalsy();
    const id = (r.structured.job as { _id: string; status: string })._id;
    expect((r.structured.job as { status: string }).status).toBe("completed");
    expect(r.structured.file_path).toBeUndefined();
    expect(String(r.structured.error)).toContain(`check_export {"job_id":"${id}"}`);
    const again = await h.call("check_export", { job_id: id });
    expect(again.isError).toBeFalsy();
    expect(String(again.structured.file_path)).toMatch(/\.xlsx$/);
    expect(again.structured.next_step).toBe(`summarize_export {"job_id":"${id}"}`);
  });
});

describe("create failures", () => {
  it("a connection dropped after the create was sent says a retry creates another job", async () => {
    h.sandbox.faults.inject({ operation: "create_export_job", action: { type: "drop" }, times: 5 });
    try {
      const r = await h.call("start_export", scenarioArgs("2026-10-03", { wait_seconds: 0 }));
      expect(r.isError).toBe(true);
      expect(r.text).toContain("creates another job");
      expect(r.text).not.toMatch(/reused/);
    } finally {
      h.sandbox.faults.clear();
    }
  });

  it("ResourceNotFound names the campaign or the scenario and where its IDs come from", async () => {
    const campaign = await h.call("start_export", {
      type: "campaign_event_data",
      campaign_id: "cmp_nope",
    });
    expect(campaign.isError).toBe(true);
    expect(campaign.text).toContain("campaign cmp_nope was not found");
    expect(campaign.text).toContain("campaign_metrics");
    const scenario = await h.call("start_export", {
      type: "scenario_daily_metrics",
      scenario_id: "scn_nope",
      from: "2026-10-01",
      to: "2026-10-02",
    });
    expect(scenario.isError).toBe(true);
    expect(scenario.text).toContain("scenario scn_nope was not found");
    expect(scenario.text).toContain("Scenario IDs come from the service console");
    expect(scenario.text).not.toContain("campaign_metrics");
  });

  it("a 400 without a code passes on what the service said", async () => {
    h.sandbox.faults.inject({
      operation: "create_export_job",
      action: { type: "status", status: 400, body: '{"message":"scenario_id has a bad format"}' },
    });
    const r = await h.call("start_export", scenarioArgs("2026-10-04"));
    expect(r.isError).toBe(true);
    expect(r.text).toContain('"scenario_id has a bad format"');
    expect(r.text).toContain("HTTP 400");
  });

  it("unknown arguments are refused by name, before any request", async () => {
    const before = creates();
    const r = await h.call("start_export", { ...scenarioArgs("2026-10-05"), scenario: "x" });
    expect(r.isError).toBe(true);
    expect(r.text).toContain("scenario");
    expect(r.text).toMatch(/unrecognized|unknown/i);
    const c = await h.call("check_export", { id: "exp_1" });
    expect(c.isError).toBe(true);
    expect(c.text).toContain("id");
    expect(creates()).toBe(before);
  });
});

describe("reuse", () => {
  it("a stale running entry (the service lost the job) is checked and replaced by a new job", async () => {
    const ledger = openLedger(h);
    const day = "2026-10-06";
    const from = "2026-10-06T00:00:00.000+09:00";
    await ledger.recordCreated(
      { type: "scenario_daily_metrics", scenario_id: scenarioId, from, to: from },
      ["scenario_daily_metrics", scenarioId, day, day].join("|"),
      {
        _id: "exp_lost_in_restart",
        application_id: h.sandbox.application_id,
        type: "scenario_daily_metrics",
        status: "processing",
        scenario_id: scenarioId,
        // The sandbox's "now", not today: the entry is as fresh whatever the real date.
        created_at: new Date(Date.parse(SANDBOX_NOW)).toISOString(),
        updated_at: new Date(Date.parse(SANDBOX_NOW)).toISOString(),
      },
    );
    const before = creates();
    const r = await h.call("start_export", scenarioArgs(day, { wait_seconds: 10 }));
    expect(r.isError).toBeFalsy();
    expect(r.structured.reused).toBe(false);
    expect((r.structured.job as { _id: string })._id).not.toBe("exp_lost_in_restart");
    expect(creates()).toBe(before + 1);
    const list = await h.call("check_export", {});
    const lost = (list.structured.jobs as Array<{ job_id: string; status: string }>).find(
      (j) => j.job_id === "exp_lost_in_restart",
    );
    expect(lost?.status).toBe("lost");
  });

  it("a reused result carries the job's creation time and next_step", async () => {
    const first = await h.call("start_export", {
      type: "campaign_event_data",
      campaign_id: campaignId,
      from: "2026-06-01",
      to: "2026-06-30",
      wait_seconds: 10,
    });
    expect(first.isError).toBeFalsy();
    const again = await h.call("start_export", {
      type: "campaign_event_data",
      campaign_id: campaignId,
      from: "2026-06-01",
      to: "2026-06-30",
    });
    const job = again.structured.job as { _id: string; created_at: string };
    expect(again.structured.reused).toBe(true);
    expect(again.structured.reused_created_at).toBe(job.created_at);
    expect(again.structured.next_step).toBe(`summarize_export {"job_id":"${job._id}"}`);
    // The path is given once in the text (structured file_path has it too).
    const path = String(again.structured.file_path);
    expect(again.text.split(path).length - 1).toBe(1);
    expect(String(again.structured.summary)).not.toContain(path);
  });
});

describe("parallel calls", () => {
  it("cannot create more jobs than the local budget allows", async () => {
    const small = await startHarness({ sandbox: h.sandbox, env: { CRM_EXPORT_BUDGET: "3/600" } });
    try {
      const before = creates();
      const days = Array.from(
        { length: 14 },
        (_, i) => `2026-09-${String(i + 1).padStart(2, "0")}`,
      );
      const results = await Promise.all(
        days.map((d) => small.call("start_export", scenarioArgs(d, { wait_seconds: 0 }))),
      );
      expect(creates() - before).toBe(3);
      expect(results.filter((r) => !r.isError)).toHaveLength(3);
      expect(results.filter((r) => r.isError && r.text.includes("3 of 3"))).toHaveLength(11);
    } finally {
      await small.close();
    }
  });
});
