import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/index.js";
import type { RunningSandbox } from "../../src/sandbox/types.js";
import type { SandboxCampaign } from "../../src/sandbox/world/types.js";
import { must } from "../helpers/must.js";
import {
  type Harness,
  SANDBOX_NOW,
  sandboxClock,
  startHarness,
  type ToolResult,
} from "../helpers/tool-harness.js";
import { waitUntil } from "../helpers/wait-until.js";
import { type NamedCall, namedCalls, nextCallsOf, type RunCall, run } from "./named-calls.js";

/**
 * Every call a hint names with its arguments (`tool {JSON}` in an error text, a next_step, a
 * resource's text) is run as written through the SDK client, and must succeed: a hint that fails
 * leaves the model stuck. Each case provokes the text the hint is in, then runs what it names.
 * Creations move the clocks past the service's 10-per-10-minutes limit, as in prompt-calls.
 */

let shift = 0;
const clock = sandboxClock(() => shift);
const nextCreationSlot = () => {
  shift += 61_000;
};

let sandbox: RunningSandbox;
let h: Harness;
beforeAll(async () => {
  // Jobs take 2 s: long enough to be seen running, short enough to wait for.
  sandbox = await startSandbox({ now: SANDBOX_NOW, jobSeconds: 2, clock: clock.real });
  h = await startHarness({ sandbox, apiNow: clock.now });
});
afterAll(async () => {
  await h?.close();
  await sandbox?.close();
});

const campaignWith = (role: SandboxCampaign["role"]) =>
  sandbox.world.campaigns.find((c) => c.role === role) as SandboxCampaign;

/** Runs every call the text names, in order, each as written; creations get a free slot. */
async function runNamed(text: string, only?: (c: NamedCall) => boolean): Promise<RunCall[]> {
  const calls = namedCalls(text).filter((c) => only?.(c) ?? true);
  expect(calls.length, `a call named in: ${text}`).toBeGreaterThan(0);
  const log: RunCall[] = [];
  for (const call of calls) {
    if (call.tool === "start_export") nextCreationSlot();
    await run(h, call, log);
  }
  return log;
}

/** A job started and left running (it takes the sandbox's 2 s). */
async function runningJob(args: Record<string, unknown>): Promise<string> {
  nextCreationSlot();
  const started = await h.call("start_export", { ...args, wait_seconds: 0 });
  expect(started.isError, started.text).toBeFalsy();
  expect(started.structured.done).toBe(false);
  return (started.structured.job as { _id: string })._id;
}

const KST_MS = 9 * 3_600_000;
/** The KST dates of a campaign's first and last rounds. */
const roundDates = (campaign: SandboxCampaign) => {
  const day = (ms: number) => new Date(ms + KST_MS).toISOString().slice(0, 10);
  return {
    from: day(campaign.tasks[0]?.scheduled_at ?? 0),
    to: day(campaign.tasks.at(-1)?.scheduled_at ?? 0),
  };
};

const scenarioExport = (from: string, to: string) => ({
  type: "scenario_daily_metrics",
  scenario_id: sandbox.world.scenarios[0]?._id,
  from,
  to,
});

describe("export errors: the calls they name run", () => {
  it("LimitExceeded without dates: the two 30-day ranges it names are accepted", async () => {
    nextCreationSlot();
    const refused = await h.call("start_export", {
      type: "campaign_event_data",
      campaign_id: campaignWith("many_rounds")._id,
    });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain("LimitExceeded");
    const log = await runNamed(refused.text, (c) => c.tool === "start_export");
    expect(log).toHaveLength(2);
  });

  it("LimitExceeded with dates: the two halves it names are accepted", async () => {
    nextCreationSlot();
    const refused = await h.call("start_export", {
      type: "campaign_event_data",
      campaign_id: campaignWith("many_rounds")._id,
      from: "2026-09-01",
      to: "2026-11-20",
    });
    expect(refused.text).toContain("LimitExceeded");
    const log = await runNamed(refused.text, (c) => c.tool === "start_export");
    expect(log.map((r) => [r.call.arguments.from, r.call.arguments.to])).toEqual([
      ["2026-09-01", "2026-10-11"],
      ["2026-10-12", "2026-11-20"],
    ]);
  });

  it("ResourceNotReady: the campaign_metrics call it names lists the rounds", async () => {
    const campaign = campaignWith("not_ready");
    nextCreationSlot();
    const refused = await h.call("start_export", {
      type: "campaign_event_data",
      campaign_id: campaign._id,
      ...roundDates(campaign),
    });
    expect(refused.text).toContain("ResourceNotReady");
    const [listing] = await runNamed(refused.text, (c) => c.tool === "campaign_metrics");
    const tasks = (listing?.result.structured.tasks ?? []) as unknown[];
    expect(tasks).toHaveLength(campaign.tasks.length);
  });

  it("ResourceNotReady of a range of recent rounds: the older range it names holds a round", async () => {
    // A campaign whose last round is still aggregating and an earlier one is not.
    const campaign = must(
      sandbox.world.campaigns.find(
        (c) =>
          c.role === "normal" &&
          c.tasks.length >= 2 &&
          c.tasks.at(-1)?.aggregated === false &&
          c.tasks.some((t) => t.aggregated),
      ),
      "a campaign with an aggregated round before one still aggregating",
    );
    const { to: lastDay } = roundDates(campaign);
    nextCreationSlot();
    const refused = await h.call("start_export", {
      type: "campaign_event_data",
      campaign_id: campaign._id,
      from: lastDay,
      to: lastDay,
    });
    expect(refused.text).toContain("ResourceNotReady");
    const [older] = await runNamed(refused.text, (c) => c.tool === "start_export");
    // run() has checked that it succeeded: the range holds a round the service could export.
    const job = must(older, "the start_export named").result.structured.job as { _id: string };
    expect(job._id).toMatch(/\S/);
  });

  it("ResourceNotReady when no round can be aggregated yet: no range is named", async () => {
    const campaign = campaignWith("not_ready");
    nextCreationSlot();
    const refused = await h.call("start_export", {
      type: "campaign_event_data",
      campaign_id: campaign._id,
      ...roundDates(campaign),
    });
    expect(refused.text).toContain("ResourceNotReady");
    expect(namedCalls(refused.text).map((c) => c.tool)).toEqual(["campaign_metrics"]);
    expect(refused.text).toContain("is expected to be aggregated yet");
  });

  it("a job the service lost: the start_export it names creates it again", async () => {
    const jobId = await runningJob(scenarioExport("2026-11-01", "2026-11-07"));
    sandbox.faults.inject({
      operation: "get_export_job",
      action: {
        type: "status",
        status: 400,
        body: JSON.stringify({ code: "ResourceNotFound", message: "Export job not found" }),
      },
    });
    // Asked without waiting: once the polling interval allows a poll, it finds the job gone and
    // the ledger marks it lost (until then the answer is the ledger's copy).
    let lost: ToolResult | undefined;
    await waitUntil(async () => {
      lost = await h.call("check_export", { job_id: jobId, wait_seconds: 0 });
      return lost.isError === true;
    }, "a poll of the lost job");
    sandbox.faults.clear();
    expect(lost?.text).toContain("lists it as lost");
    const [again] = await runNamed(must(lost, "lost job result").text);
    expect(again?.call.arguments).toMatchObject({ force: true, from: "2026-11-01" });
    const newJob = must(again, "the call the hint names").result.structured.job;
    expect(newJob).toMatchObject({ _id: expect.any(String) });
    expect(newJob).not.toMatchObject({ _id: jobId });
  });

  it("a poll that failed on the network: the check_export it names continues", async () => {
    const jobId = await runningJob(scenarioExport("2026-11-02", "2026-11-08"));
    // Every attempt of a poll dropped; once the polling interval allows one, it fails.
    sandbox.faults.inject({ operation: "get_export_job", action: { type: "drop" }, times: 100 });
    let failed: ToolResult | undefined;
    await waitUntil(async () => {
      failed = await h.call("check_export", { job_id: jobId, wait_seconds: 0 });
      return failed.isError === true || failed.structured.error !== undefined;
    }, "a poll that failed");
    sandbox.faults.clear();
    const text = `${failed?.text}\n${String(failed?.structured.error)}`;
    expect(text).toMatch(/socket|network|connection/i);
    expect(text).toContain(`check_export {"job_id":"${jobId}"`);
    const log = await runNamed(text, (c) => c.tool === "check_export");
    expect(log.every((r) => r.call.arguments.job_id === jobId)).toBe(true);
  });
});

describe("file errors: the calls they name run", () => {
  it("summarize_export of a job still running: check_export as named, then the summary", async () => {
    const jobId = await runningJob(scenarioExport("2026-11-03", "2026-11-09"));
    const early = await h.call("summarize_export", { job_id: jobId });
    expect(early.isError).toBe(true);
    const [waited] = await runNamed(early.text);
    expect(waited?.call).toEqual({
      tool: "check_export",
      arguments: { job_id: jobId, wait_seconds: 30 },
    });
    const summary = await h.call("summarize_export", { job_id: jobId });
    expect(summary.isError, summary.text).toBeFalsy();
  });

  // summarize_export waits 20 s for a download before it names check_export: the download is
  // throttled to take longer than that.
  it("summarize_export while the file downloads: the check_export it names waits for it", {
    timeout: 120_000,
  }, async () => {
    // A week of a small campaign (some 200 KB) at 8 KB/s: still downloading after 20 s.
    const campaign = campaignWith("normal");
    const last = campaign.tasks.filter((t) => t.aggregated).at(-1)?.scheduled_at ?? 0;
    const to = new Date(last + KST_MS).toISOString().slice(0, 10);
    sandbox.faults.inject({
      operation: "download",
      action: { type: "throttle", bytesPerSecond: 8_000 },
    });
    const jobId = await runningJob({
      type: "campaign_event_data",
      campaign_id: campaign._id,
      from: new Date(Date.parse(to) - 6 * 86_400_000).toISOString().slice(0, 10),
      to,
    });
    await waitUntil(
      async () =>
        (await h.call("check_export", { job_id: jobId, wait_seconds: 0 })).structured.status ===
        "downloading",
      "the job completed and its file downloading",
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    const early = await h.call("summarize_export", { job_id: jobId });
    sandbox.faults.clear();
    expect(early.isError).toBe(true);
    const [waited] = await runNamed(early.text);
    expect(waited?.result.structured.file_path).toMatch(/\.csv$/);
    const summary = await h.call("summarize_export", { job_id: jobId });
    expect(summary.isError, summary.text).toBeFalsy();
  });

  it("a resource of a job without its file: the check_export it names gets the file", async () => {
    const jobId = await runningJob(scenarioExport("2026-11-04", "2026-11-10"));
    const uri = `crm-export://${jobId}`;
    const error = await h.client.readResource({ uri }).then(
      () => "",
      (e: unknown) => String(e),
    );
    expect(error).toContain("check_export");
    await runNamed(error);
    const { contents } = await h.client.readResource({ uri });
    expect(contents[0]).toHaveProperty("blob");
  });

  it("a resource too large to return inline: the summarize_export it names runs", async () => {
    const campaign = campaignWith("many_rounds");
    nextCreationSlot();
    const done = await h.call("start_export", {
      type: "campaign_event_data",
      campaign_id: campaign._id,
      from: "2026-10-01",
      to: "2026-11-20",
    });
    expect(done.structured.file_path).toMatch(/\.csv$/);
    const jobId = (done.structured.job as { _id: string })._id;
    const { contents } = await h.client.readResource({ uri: `crm-export://${jobId}` });
    const text = (contents[0] as { text: string }).text;
    expect(text).toContain("too large to return inline");
    const [summary] = await runNamed(text);
    expect(summary?.call.tool).toBe("summarize_export");
  });
});

describe("campaign_metrics: the calls its texts name run", () => {
  it("a window that is not whole days: the campaign_metrics it names for the export's hours", async () => {
    const r = await h.call("campaign_metrics", {
      task_from: "2026-11-01T12:00:00+09:00",
      task_to: "2026-11-08T12:00:00+09:00",
    });
    expect(r.isError, r.text).toBeFalsy();
    const text = (r.structured.vs_export as string[]).join("\n");
    const [named] = await runNamed(text);
    expect(named?.call.arguments).toEqual({
      task_from: "2026-11-01T00:00:00+09:00",
      task_to: "2026-11-09T00:00:00+09:00",
    });
  });

  it("a window over three years: the shorter window it names", async () => {
    const r = await h.call("campaign_metrics", { task_from: "2020-01-01", task_to: "2026-11-20" });
    expect(r.isError).toBe(true);
    await runNamed(r.text);
  });

  it("a call over its time bound: the shorter window it names", async () => {
    const slow = await startHarness({
      sandbox,
      apiNow: clock.now,
      env: { CRM_METRICS_CALL_SECONDS: "1" },
    });
    try {
      sandbox.faults.inject({
        operation: "campaign_metrics",
        action: { type: "delay", ms: 3_000 },
        times: 3,
      });
      const r = await slow.call("campaign_metrics", {
        task_from: "2026-05-01",
        task_to: "2026-11-20",
      });
      sandbox.faults.clear();
      expect(r.isError).toBe(true);
      expect(r.text).toContain("CRM_METRICS_CALL_SECONDS");
      await runNamed(r.text);
    } finally {
      sandbox.faults.clear();
      await slow.close();
    }
  });

  it.each([
    ["a filter that matches nothing", { tag: "no-such-tag" }],
    ["a window without rounds", { task_from: "2025-01-01", task_to: "2025-01-31" }],
  ])("%s: the campaign_metrics in next_calls", async (_, args) => {
    const r = await h.call("campaign_metrics", args);
    expect(r.structured.matched_campaigns).toBe(0);
    const log: RunCall[] = [];
    for (const call of nextCallsOf(r)) await run(h, call, log);
    expect(log.map((l) => l.call.tool)).toEqual(["campaign_metrics"]);
  });

  it("its description's example runs", async () => {
    const { tools } = await h.client.listTools();
    const description = must(
      tools.find((t) => t.name === "campaign_metrics")?.description,
      "campaign_metrics description",
    );
    await runNamed(description);
  });
});

describe("check_export listing: the call in next_calls runs", () => {
  const follow = async (on: Harness): Promise<ToolResult> => {
    const listing = await on.call("check_export", {});
    expect(listing.isError, listing.text).toBeFalsy();
    const [next] = nextCallsOf(listing);
    expect(next).toBeDefined();
    const result = await on.call(must(next, "next call").tool, must(next, "next call").arguments);
    expect(result.isError, `${JSON.stringify(next)}: ${result.text}`).toBeFalsy();
    return { ...result, structured: { ...result.structured, ran: next?.tool } };
  };

  it("no job yet: campaign_metrics", async () => {
    const fresh = await startHarness({ sandbox, apiNow: clock.now });
    try {
      expect((await follow(fresh)).structured.ran).toBe("campaign_metrics");
    } finally {
      await fresh.close();
    }
  });

  it("a job running: check_export of it, then the newest file: summarize_export", async () => {
    const own = await startHarness({ sandbox, apiNow: clock.now });
    try {
      nextCreationSlot();
      const started = await own.call("start_export", {
        ...scenarioExport("2026-11-05", "2026-11-11"),
        wait_seconds: 0,
      });
      expect(started.structured.done).toBe(false);
      expect((await follow(own)).structured.ran).toBe("check_export");
      expect((await follow(own)).structured.ran).toBe("summarize_export");
    } finally {
      await own.close();
    }
  });
});
