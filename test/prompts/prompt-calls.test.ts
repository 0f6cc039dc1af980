import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/index.js";
import type { RunningSandbox } from "../../src/sandbox/types.js";
import { createWorld } from "../../src/sandbox/world/index.js";
import type { SandboxCampaign } from "../../src/sandbox/world/types.js";
import {
  type Harness,
  SANDBOX_NOW,
  sandboxClock,
  startHarness,
  type ToolResult,
} from "../helpers/tool-harness.js";
import {
  exportAndFollow,
  mentionsJobId,
  type NamedCall,
  namedCalls,
  nextCallsOf,
  type RunCall,
  run,
  withJobId,
} from "./named-calls.js";

/**
 * Every prompt, on every campaign and scenario of the sandbox, with and without dates: the calls
 * its text names are read exactly as the model reads them (`tool {JSON}`) and run through the SDK
 * client, then the calls their results name as next step, down to the summaries. Each must
 * succeed, but for the campaign the sandbox makes fail on purpose.
 *
 * The service takes 10 export creations per 10 minutes: the sandbox's clock (and the server's)
 * moves 61 s ahead before each start_export, so the run never meets that limit (nor the local
 * budget) and stays within one day of the sandbox's data.
 */

const world = createWorld({ seed: 42, now: Date.parse(SANDBOX_NOW) });
const KST_MS = 9 * 3_600_000;
const kstDate = (ms: number) => new Date(ms + KST_MS).toISOString().slice(0, 10);
const minusDays = (date: string, days: number) =>
  new Date(Date.parse(date) - days * 86_400_000).toISOString().slice(0, 10);

/** Dates a user who knows the campaign would give: the week up to its latest aggregated round. */
function givenDates(campaign: SandboxCampaign): { from: string; to: string } {
  const aggregated = campaign.tasks.filter((t) => t.aggregated);
  const latest = (aggregated.at(-1) ?? campaign.tasks.at(-1))?.scheduled_at ?? world.now;
  const to = kstDate(latest);
  return { from: minusDays(to, 6), to };
}

let shift = 0;
const clock = sandboxClock(() => shift);
/** Moves both clocks past the service's creation rate limit (10 per 10 minutes). */
const nextCreationSlot = () => {
  shift += 61_000;
};

let sandbox: RunningSandbox;
let h: Harness;
beforeAll(async () => {
  sandbox = await startSandbox({ world, now: SANDBOX_NOW, jobSeconds: 0.1, clock: clock.real });
  h = await startHarness({ sandbox, apiNow: clock.now });
});
afterAll(async () => {
  await h?.close();
  await sandbox?.close();
});

async function promptText(name: string, args: Record<string, string>): Promise<string> {
  const r = await h.client.getPrompt({ name, arguments: args });
  const message = r.messages[0];
  if (message?.content.type !== "text") throw new Error(`${name} gave no text`);
  return message.content.text;
}

/**
 * Runs what a prompt says, in its order: its own calls (each start_export followed to its file),
 * the start_export calls of the first campaign_metrics result where the text sends the model to
 * its next_calls, then every call written with `<job_id>` once per job exported; but the tools
 * in `skip`.
 */
async function runPrompt(text: string, skip: string[] = []): Promise<RunCall[]> {
  const log: RunCall[] = [];
  const calls = namedCalls(text).filter((c) => !skip.includes(c.tool));
  const jobIds: string[] = [];
  let firstMetrics: ToolResult | undefined;
  const exportOne = async (call: NamedCall) => {
    nextCreationSlot();
    jobIds.push(await exportAndFollow(h, call, log));
  };
  for (const call of calls.filter((c) => !mentionsJobId(c))) {
    if (call.tool === "start_export") await exportOne(call);
    else {
      const result = await run(h, call, log);
      if (call.tool === "campaign_metrics") firstMetrics ??= result;
    }
  }
  if (text.includes("names in next_calls") && firstMetrics !== undefined) {
    for (const next of nextCallsOf(firstMetrics).filter((c) => c.tool === "start_export")) {
      await exportOne(next);
    }
  }
  for (const call of calls.filter(mentionsJobId)) {
    for (const id of jobIds) await run(h, withJobId(call, id), log);
  }
  return log;
}

const ran = (log: RunCall[], tool: string) => log.filter((r) => r.call.tool === tool);

const campaigns = world.campaigns;
/**
 * The huge campaign (about 110,000 sends a day) is too big to export here, with or without
 * dates: its creations are tested below. The failing one fails on purpose, also below.
 */
const exportable = campaigns.filter((c) => !["huge_sends", "failing_export"].includes(c.role));

describe.each(["ab_test_readout", "delivery_failure_investigation"])("%s", (prompt) => {
  // No round of the not_ready campaign can be exported yet: its prompt reads live metrics.
  const path = (c: SandboxCampaign) => (c.role === "not_ready" ? "live metrics" : "export");
  const cases = exportable.flatMap((c) => [
    { id: c._id, role: c.role, dates: undefined, path: path(c) },
    { id: c._id, role: c.role, dates: givenDates(c), path: path(c) },
  ]);

  it.each(cases)("$id ($role), dates $dates: every call it names runs", async (c) => {
    const text = await promptText(prompt, { campaign_id: c.id, ...c.dates });
    // The example query (the same SQL on every export) runs once per campaign, on its export of
    // the period without dates: a DuckDB session per case would double this file's time.
    const log = await runPrompt(text, c.dates === undefined ? [] : ["query_export"]);
    const exports = ran(log, "start_export").length;
    expect(exports > 0 ? "export" : "live metrics").toBe(c.path);
    expect(ran(log, "summarize_export")).toHaveLength(exports);
    expect(ran(log, "campaign_metrics").length + exports).toBeGreaterThan(0);
  });
});

describe("campaign_vs_history", () => {
  // One campaign of each role the prompt can meet (its plans: export, live metrics), with and
  // without dates: the calls are those of the other campaign prompts, plus the comparison.
  const roles = [...new Set(exportable.map((c) => c.role))];
  const cases = roles.flatMap((role) => {
    const c = exportable.find((x) => x.role === role) as SandboxCampaign;
    return [
      { id: c._id, role, dates: undefined },
      { id: c._id, role, dates: givenDates(c) },
    ];
  });

  it.each(cases)("$id ($role), dates $dates: every call it names runs", async (c) => {
    const text = await promptText("campaign_vs_history", { campaign_id: c.id, ...c.dates });
    const log = await runPrompt(text);
    const exports = ran(log, "start_export").length;
    expect(exports > 0 ? "export" : "live metrics").toBe(
      c.role === "not_ready" ? "live metrics" : "export",
    );
    expect(ran(log, "summarize_export")).toHaveLength(exports);
    const compared = ran(log, "campaign_metrics").filter(
      (r) => r.call.arguments.compare_to === "previous_period",
    );
    expect(compared.map((r) => r.result.structured.comparison !== undefined)).toEqual(
      exports > 0 ? [true] : [],
    );
  });
});

describe("campaign prompts with dates", () => {
  it("name the given dates in the export call", async () => {
    const campaign = exportable.find((c) => c.role === "normal") as SandboxCampaign;
    const dates = givenDates(campaign);
    const text = await promptText("ab_test_readout", { campaign_id: campaign._id, ...dates });
    expect(namedCalls(text)[0]).toEqual({
      tool: "start_export",
      arguments: { type: "campaign_event_data", campaign_id: campaign._id, ...dates },
    });
  });
});

describe("the campaign whose export jobs fail on the service", () => {
  const failing = campaigns.find((c) => c.role === "failing_export") as SandboxCampaign;
  it.each([undefined, givenDates(failing)])(
    "dates %j: the failure says to create a new job",
    async (dates) => {
      const text = await promptText("ab_test_readout", { campaign_id: failing._id, ...dates });
      const [first] = namedCalls(text);
      expect(first?.tool).toBe("start_export");
      nextCreationSlot();
      const failed = await h.call("start_export", first?.arguments ?? {});
      expect(failed.isError).toBe(true);
      expect(failed.text).toContain("failed on the service");
      expect(failed.text).toContain('start_export and "force": true');
      // As the error says; the sandbox fails this campaign's every job, so the new one fails alike.
      nextCreationSlot();
      const again = await h.call("start_export", { ...first?.arguments, force: true });
      expect(again.isError).toBe(true);
      const jobOf = (text: string) => text.match(/Export job (\S+) .*failed on the service/)?.[1];
      expect(jobOf(again.text)).toMatch(/\S/);
      expect(jobOf(again.text)).not.toBe(jobOf(failed.text));
    },
  );
});

describe("scenario_health_check", () => {
  const dates: Array<Record<string, string>> = [
    {},
    { from: "2026-11-01", to: "2026-11-14" },
    { from: "2026-11-10" },
    { to: "2026-11-07" },
  ];
  const cases = world.scenarios.flatMap((s) => dates.map((d) => ({ id: s._id, dates: d })));
  it.each(cases)("$id, dates $dates: every call it names runs", async (c) => {
    const text = await promptText("scenario_health_check", { scenario_id: c.id, ...c.dates });
    const [first] = namedCalls(text);
    expect(first?.arguments).toMatchObject({ from: expect.any(String), to: expect.any(String) });
    const log = await runPrompt(text);
    expect(ran(log, "start_export")).toHaveLength(1);
    expect(ran(log, "summarize_export")).toHaveLength(1);
  });
});

describe("weekly_campaign_report", () => {
  it("a given week: one metrics call with the week before, the top campaign's export and its summary run", async () => {
    const text = await promptText("weekly_campaign_report", { week_start: "2026-10-05" });
    const log = await runPrompt(text);
    const metrics = ran(log, "campaign_metrics");
    expect(metrics.map((r) => r.call.arguments)).toEqual([
      {
        task_from: "2026-10-05",
        task_to: "2026-10-11",
        sort_by: "revenue",
        top_n: 10,
        compare_to: "previous_period",
      },
    ]);
    // The 7 days before, KST, end exclusive.
    expect(metrics[0]?.result.structured.comparison).toMatchObject({
      compare_to: "previous_period",
      task_from: expect.stringMatching(/^2026-09-28T00:00:00/),
      task_to: expect.stringMatching(/^2026-10-05T00:00:00/),
      change: { sent_count: { current: expect.any(Number) } },
    });
    expect(ran(log, "start_export").length).toBeGreaterThan(0);
    expect(ran(log, "summarize_export").length).toBe(ran(log, "start_export").length);
  });
});

describe("the campaign too large to export whole here", () => {
  // About 110,000 sends a day. What is checked is that the service accepts each export the
  // prompts name (it checks its limits at creation). Each creation goes to a sandbox of its own,
  // closed at once, which stops writing the file: the sandbox runs in this process.
  const huge = campaigns.find((c) => c.role === "huge_sends") as SandboxCampaign;
  let hb: Harness;
  beforeAll(async () => {
    hb = await startHarness({
      sandbox: await startSandbox({ world, now: SANDBOX_NOW, jobSeconds: 0.1 }),
    });
  });
  afterAll(async () => {
    await hb?.close();
    await hb?.sandbox.close();
  });

  const text = async (name: string, args: Record<string, string>) => {
    const r = await hb.client.getPrompt({ name, arguments: args });
    const message = r.messages[0];
    return message?.content.type === "text" ? message.content.text : "";
  };
  const accepted = async (call: NamedCall | undefined) => {
    expect(call?.tool).toBe("start_export");
    const own = await startHarness({
      sandbox: await startSandbox({ world, now: SANDBOX_NOW, jobSeconds: 0.1 }),
    });
    try {
      const result = await own.call("start_export", { ...call?.arguments, wait_seconds: 0 });
      expect(result.isError, result.text).toBeFalsy();
    } finally {
      await own.sandbox.close();
      await own.close();
    }
  };
  it.each([{}, givenDates(huge)])(
    "dates %j: both campaign prompts name one export the service accepts",
    async (dates) => {
      const ab = namedCalls(await text("ab_test_readout", { campaign_id: huge._id, ...dates }));
      const delivery = namedCalls(
        await text("delivery_failure_investigation", { campaign_id: huge._id, ...dates }),
      );
      expect(delivery[0]).toEqual(ab[0]);
      expect(ab[0]?.arguments).toMatchObject(dates);
      await accepted(ab[0]);
    },
  );

  it("a given period too large for one export is split into exports it accepts", async () => {
    const calls = namedCalls(
      await text("delivery_failure_investigation", {
        campaign_id: huge._id,
        from: "2026-10-20",
        to: "2026-11-20",
      }),
    ).filter((c) => c.tool === "start_export");
    expect(calls.length).toBeGreaterThan(1);
    expect(calls[0]?.arguments.from).toBe("2026-10-20");
    expect(calls.at(-1)?.arguments.to).toBe("2026-11-20");
    for (const call of calls) await accepted(call);
  });

  it("the weekly report of last week, whose top campaign it is: its export is accepted", async () => {
    const calls = namedCalls(await text("weekly_campaign_report", {}));
    expect(calls.map((c) => c.tool)).toEqual(["campaign_metrics", "summarize_export"]);
    const week = await hb.call("campaign_metrics", calls[0]?.arguments ?? {});
    expect(week.isError, week.text).toBeFalsy();
    const exports = nextCallsOf(week).filter((c) => c.tool === "start_export");
    expect(exports.map((c) => c.arguments.campaign_id)).toContain(huge._id);
    for (const call of exports) await accepted(call);
  });
});
