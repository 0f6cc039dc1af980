import { existsSync, readFileSync, statSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { must } from "../../helpers/must.js";
import { type Harness, startHarness, type ToolResult } from "../../helpers/tool-harness.js";
import { waitUntil } from "../../helpers/wait-until.js";

let h: Harness;
let campaignId: string;
let scenarioId: string;
beforeAll(async () => {
  h = await startHarness({ env: { CRM_EXPORT_BUDGET: "6/600" } });
  const normal = h.sandbox.world.campaigns.find(
    (c) => c.role === "normal" && c.tasks.some((t) => t.aggregated),
  );
  campaignId = must(normal?._id, "a normal campaign with an aggregated round in the sandbox");
  scenarioId = must(h.sandbox.world.scenarios[0]?._id, "a scenario in the sandbox");
});
afterAll(async () => {
  await h?.close();
});

describe("start_export and check_export", () => {
  describe("a campaign export waited for", () => {
    const progress: string[] = [];
    let r: {
      isError?: boolean;
      structuredContent: Record<string, unknown>;
      content: Array<Record<string, unknown>>;
    };
    let job: Record<string, unknown>;
    let path: string;
    beforeAll(async () => {
      r = (await h.client.callTool(
        {
          name: "start_export",
          arguments: { type: "campaign_event_data", campaign_id: campaignId, wait_seconds: 10 },
        },
        { onprogress: (p: { message?: string }) => progress.push(String(p.message)) },
      )) as typeof r;
      job = r.structuredContent.job as Record<string, unknown>;
      path = r.structuredContent.file_path as string;
    });

    it("completes within the wait and downloads the CSV, header first", () => {
      expect(r.isError).toBeFalsy();
      expect(job.status).toBe("completed");
      expect(existsSync(path)).toBe(true);
      expect(readFileSync(path, "utf8").split(/\r?\n/)[0]).toBe(
        "task_id,scheduled_at,group,event_type,user_id,platform_user_id,captured_at,channel,error_code,error_message,event_properties,custom_event_properties,internal_event_properties",
      );
    });

    it("shows no signature of the download URL", () => {
      expect(String(job.download_url)).not.toMatch(/sig|signature|token=/i);
    });

    it("sends progress notifications that name the job's status while it waits", () => {
      expect(progress.length).toBeGreaterThan(0);
      expect(
        progress.some(
          (m) => m.includes("completed") || m.includes("processing") || m.includes("triggered"),
        ),
      ).toBe(true);
    });

    it("links the file as a crm-export:// resource that resources/list lists", async () => {
      const link = r.content.find((c) => c.type === "resource_link");
      expect(link?.uri).toBe(`crm-export://${job._id}`);
      const listed = await h.client.listResources();
      expect(listed.resources.map((x) => x.uri)).toContain(`crm-export://${job._id}`);
    });

    it("reads a file too large to return inline as a resource that gives its path", async () => {
      // The sandbox's campaign export is several MB, past the 512 KiB returned inline.
      expect(statSync(path).size).toBeGreaterThan(512 * 1024);
      const read = await h.client.readResource({ uri: `crm-export://${job._id}` });
      const first = read.contents[0] as { text?: string };
      expect(first.text).toContain("too large to return inline");
      expect(first.text).toContain(path);
    });

    it("answers an identical request from the ledger, creating no job", async () => {
      const creates = h.sandbox.faults.requestCounts.create_export_job;
      const again = await h.call("start_export", {
        type: "campaign_event_data",
        campaign_id: campaignId,
      });
      expect(again.structured.reused).toBe(true);
      expect((again.structured.job as Record<string, unknown>)._id).toBe(job._id);
      expect(again.text).toContain("ledger");
      expect(h.sandbox.faults.requestCounts.create_export_job).toBe(creates);
    });

    it("creates a new job for an identical request with force", async () => {
      const creates = h.sandbox.faults.requestCounts.create_export_job;
      const forced = await h.call("start_export", {
        type: "campaign_event_data",
        campaign_id: campaignId,
        force: true,
        wait_seconds: 0,
      });
      expect(forced.structured.reused).toBe(false);
      expect(h.sandbox.faults.requestCounts.create_export_job).toBe(creates + 1);
    });
  });

  describe("a scenario export with wait_seconds 0", () => {
    let r: ToolResult;
    let job: Record<string, string>;
    beforeAll(async () => {
      r = await h.call("start_export", {
        type: "scenario_daily_metrics",
        scenario_id: scenarioId,
        from: "2026-11-01",
        to: "2026-11-15",
        wait_seconds: 0,
      });
      job = r.structured.job as Record<string, string>;
    });

    it("returns at once with the job just triggered", () => {
      expect(r.isError).toBeFalsy();
      expect(job.status).toBe("triggered");
    });

    it("sends the service UTC instants and gives the inclusive dates in KST", () => {
      // The API gives UTC instants (spec 2.3); the result adds the inclusive dates in KST.
      expect(Date.parse(must(job.from, "from of the job"))).toBe(
        Date.parse("2026-11-01T00:00:00+09:00"),
      );
      expect(r.structured.from_date).toBe("2026-11-01");
      expect(r.structured.to_date).toBe("2026-11-15");
      expect(r.text).toContain("2026-11-01 to 2026-11-15 (inclusive)");
      expect(r.text).not.toContain("T00:00:00");
    });

    it("says how much of the export budget is used", () => {
      expect(r.text).toMatch(/Export budget: \d+\/6 creations used in the last 10 min\./);
    });

    it("gives the exact check_export call as the next step", () => {
      const next = `check_export {"job_id":"${job._id}","wait_seconds":30}`;
      expect(r.structured.next_step).toBe(next);
      expect(r.text).toContain(next);
    });

    it("is finished by that check_export call, with the workbook downloaded", async () => {
      const done = await h.call("check_export", { job_id: job._id, wait_seconds: 10 });
      expect(done.isError).toBeFalsy();
      expect((done.structured.job as Record<string, string>).status).toBe("completed");
      expect(String(done.structured.file_path)).toMatch(/\.xlsx$/);
    });
  });

  it("lists recent jobs from the ledger, also after a restart", async () => {
    const list = await h.call("check_export", {});
    const jobs = list.structured.jobs as Array<Record<string, unknown>>;
    expect(jobs.length).toBeGreaterThanOrEqual(3);
    expect(jobs[0]?.type).toBe("scenario_daily_metrics");
    // Times in the text are in the application's zone, like every other tool's, and say so.
    const requested = jobs[0]?.requested_at as string;
    const kst = new Date(Date.parse(requested) + 9 * 3_600_000).toISOString();
    expect(list.text).toContain("requested (KST)");
    expect(list.text).toContain(`${kst.slice(0, 10)} ${kst.slice(11, 16)}`);
    // The forced job of the first test was left running: the listing's next step finishes it.
    const running = jobs.find((j) => j.status === "triggered" || j.status === "processing");
    expect(running).toBeDefined();
    expect(list.structured.next_step).toBe(
      `check_export {"job_id":"${running?.job_id}","wait_seconds":30}`,
    );
    const restarted = await h.restart();
    const again = (await restarted.callTool({ name: "check_export", arguments: {} })) as {
      structuredContent: { jobs: unknown[] };
    };
    expect(again.structuredContent.jobs).toEqual(jobs);
  });

  it("stops waiting, and polling, when the call is cancelled", async () => {
    const slow = await startHarness({ jobSeconds: 30 });
    try {
      const controller = new AbortController();
      const started = Date.now();
      // Cancelled once the job has been polled twice (each poll reports progress): mid-wait.
      let polls = 0;
      const pending = slow.client.callTool(
        {
          name: "start_export",
          arguments: {
            type: "scenario_daily_metrics",
            scenario_id: scenarioId,
            from: "2026-10-01",
            to: "2026-10-02",
            wait_seconds: 40,
          },
        },
        {
          signal: controller.signal,
          onprogress: () => {
            if (++polls === 2) controller.abort();
          },
        },
      );
      await expect(pending).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(5000);
      const polledAt = slow.runtime.lastPolledAt;
      const [cancelled, ...others] = [...polledAt.keys()];
      expect(cancelled).toBeDefined();
      expect(others).toEqual([]);
      // Polling stopping is an absence, so it takes a window: a call made afterwards polls its
      // own job at the same 0.2 s interval, and while it does, a still-running wait would too.
      const later = slow.call("start_export", {
        type: "scenario_daily_metrics",
        scenario_id: scenarioId,
        from: "2026-10-03",
        to: "2026-10-04",
        wait_seconds: 1.5,
      });
      await waitUntil(() => polledAt.size === 2, "the later call's first poll");
      const lastPoll = polledAt.get(cancelled as string);
      const pollsBefore = slow.sandbox.faults.requestCounts.get_export_job;
      const result = await later;
      expect(result.isError).toBeFalsy();
      // The window spans several poll intervals (the later job takes 30 s, its wait 1.5 s).
      expect(slow.sandbox.faults.requestCounts.get_export_job - pollsBefore).toBeGreaterThan(3);
      expect(polledAt.get(cancelled as string)).toBe(lastPoll);
    } finally {
      await slow.close();
    }
  });

  it("validates inputs before any request", async () => {
    const creates = h.sandbox.faults.requestCounts.create_export_job;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ type: "campaign_event_data" }, "campaign_id is required"],
      [
        { type: "scenario_daily_metrics", scenario_id: scenarioId, from: "2026-11-01" },
        "from and to are both required",
      ],
      [
        { type: "scenario_daily_metrics", from: "2026-11-01", to: "2026-11-02" },
        "scenario_id is required",
      ],
      [
        { type: "campaign_event_data", campaign_id: "x", scenario_id: "y" },
        "scenario_id belongs to",
      ],
      [{ type: "campaign_event_data", campaign_id: "x", from: "2026-13-01" }, "not a valid date"],
      [
        { type: "campaign_event_data", campaign_id: "x", from: "2026-11-05", to: "2026-11-01" },
        "is after to",
      ],
      [
        { type: "campaign_event_data", campaign_id: "x", wait_seconds: 99 },
        "wait_seconds must be between 0 and 50",
      ],
    ];
    for (const [args, message] of cases) {
      const r = await h.call("start_export", args);
      expect(r.isError, JSON.stringify(args)).toBe(true);
      expect(r.text).toContain(message);
    }
    const badId = await h.call("check_export", { job_id: "exp_does_not_exist", wait_seconds: 0 });
    expect(badId.isError).toBe(true);
    expect(badId.text).toMatch(/not found/i);
    expect(h.sandbox.faults.requestCounts.create_export_job).toBe(creates);
  });
});
