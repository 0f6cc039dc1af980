import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { must } from "../helpers/must.js";
import { type Harness, startHarness } from "../helpers/tool-harness.js";
import { waitUntil } from "../helpers/wait-until.js";
import { namedCalls } from "./named-calls.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const PROMPTS = [
  "weekly_campaign_report",
  "ab_test_readout",
  "delivery_failure_investigation",
  "campaign_vs_history",
  "scenario_health_check",
];

async function promptText(name: string, args: Record<string, string>): Promise<string> {
  const r = await h.client.getPrompt({ name, arguments: args });
  const message = r.messages[0];
  return message?.content.type === "text" ? message.content.text : "";
}

describe("prompts", () => {
  it("lists the common reports with their arguments", async () => {
    const { prompts } = await h.client.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual([...PROMPTS].sort());
    const ab = prompts.find((p) => p.name === "ab_test_readout");
    expect(ab?.arguments?.find((a) => a.name === "campaign_id")?.required).toBe(true);
    expect(ab?.arguments?.find((a) => a.name === "from")?.required).toBeFalsy();
  });

  it("a campaign the service reports no round of: the plan finds its rounds first", async () => {
    const text = await promptText("ab_test_readout", {
      campaign_id: "cmp_x1",
      from: "2026-11-01",
      to: "2026-11-14",
    });
    expect(text).toContain(
      "the service reports no round of this campaign from 2026-11-01 to 2026-11-14",
    );
    expect(namedCalls(text)[0]).toEqual({
      tool: "campaign_metrics",
      arguments: {
        campaign_ids: ["cmp_x1"],
        include_tasks: true,
        sort_by: "latest",
        task_from: "2024-11-22",
        task_to: "2026-11-22",
      },
    });
  });

  it("the service not reached: the plan asks it, or exports the given dates as they are", async () => {
    // More failures than the client's attempts: the prompt's one lookup fails for sure.
    h.sandbox.faults.inject({
      operation: "campaign_metrics",
      action: { type: "status", status: 500 },
      times: 3,
    });
    const campaign = must(h.sandbox.campaign_ids[0], "campaign");
    const fresh = await h.restart();
    const get = async (args: Record<string, string>) => {
      const r = await fresh.getPrompt({ name: "delivery_failure_investigation", arguments: args });
      const m = r.messages[0];
      return m?.content.type === "text" ? m.content.text : "";
    };
    const dated = await get({ campaign_id: campaign, from: "2026-11-01", to: "2026-11-14" });
    h.sandbox.faults.clear();
    expect(namedCalls(dated)[0]).toEqual({
      tool: "start_export",
      arguments: {
        type: "campaign_event_data",
        campaign_id: campaign,
        from: "2026-11-01",
        to: "2026-11-14",
      },
    });
    expect(dated).toContain(
      "If the service answers that the range is too large or not aggregated yet, run the calls its error names instead.",
    );
    h.sandbox.faults.inject({
      operation: "campaign_metrics",
      action: { type: "status", status: 500 },
      times: 3,
    });
    const undated = await get({ campaign_id: campaign });
    h.sandbox.faults.clear();
    expect(undated).toContain("the service could not be asked for its rounds just now");
    const [first] = namedCalls(undated);
    expect(first?.tool).toBe("campaign_metrics");
    const asked = await h.call("campaign_metrics", first?.arguments ?? {});
    expect(asked.isError, asked.text).toBeFalsy();
    expect(asked.structured.matched_campaigns).toBe(1);
  });

  it.each([
    ["ab_test_readout", { campaign_id: "cmp_x1" }],
    ["scenario_health_check", { scenario_id: "s1" }],
  ])("%s refuses from after to", async (name, args) => {
    await expect(
      h.client.getPrompt({ name, arguments: { ...args, from: "2026-11-14", to: "2026-11-01" } }),
    ).rejects.toThrow("from (2026-11-14) is after to (2026-11-01)");
  });

  it("refuses a malformed date argument", async () => {
    await expect(
      h.client.getPrompt({
        name: "scenario_health_check",
        arguments: { scenario_id: "s1", from: "last week" },
      }),
    ).rejects.toThrow(/YYYY-MM-DD/);
  });
});

describe("argument completion", () => {
  it("completes campaign IDs with the campaigns the service reports, filtered by what is typed", async () => {
    const metrics = await h.call("campaign_metrics", { top_n: 500 });
    const ids = (metrics.structured.campaigns as Array<{ _id: string }>).map((c) => c._id);
    expect(ids.length).toBeGreaterThan(1);
    const all = await h.client.complete({
      ref: { type: "ref/prompt", name: "ab_test_readout" },
      argument: { name: "campaign_id", value: "" },
    });
    // campaign_metrics' default window is 30 days, completion looks 180 days back.
    for (const id of ids) expect(all.completion.values).toContain(id);
    const first = must(ids[0], "campaign in campaign_metrics");
    const typed = first.slice(0, first.length - 1);
    const some = await h.client.complete({
      ref: { type: "ref/prompt", name: "delivery_failure_investigation" },
      argument: { name: "campaign_id", value: typed },
    });
    expect(some.completion.values).toContain(first);
    for (const v of some.completion.values) expect(v.startsWith(typed)).toBe(true);
  });

  it("completes scenario IDs from the export ledger", async () => {
    const scenario = must(h.sandbox.scenario_ids[0], "scenario");
    const started = await h.call("start_export", {
      type: "scenario_daily_metrics",
      scenario_id: scenario,
      from: "2026-11-01",
      to: "2026-11-07",
      wait_seconds: 0,
    });
    expect(started.isError, started.text).toBeFalsy();
    const r = await h.client.complete({
      ref: { type: "ref/prompt", name: "scenario_health_check" },
      argument: { name: "scenario_id", value: scenario.slice(0, 3) },
    });
    expect(r.completion.values).toContain(scenario);
  });
});

describe("MCP logging", () => {
  it("sends the request's log messages at the level the client set, redacted", async () => {
    const messages: Array<{ level: string; data: unknown }> = [];
    h.client.setNotificationHandler("notifications/message", (n) => {
      messages.push({ level: n.params.level, data: n.params.data });
    });
    await h.client.setLoggingLevel("info");
    const failed = await h.call("campaign_metrics", { task_from: "last week" });
    expect(failed.isError).toBe(true);
    // A notification may arrive after the result it belongs to: wait for it.
    const failures = () =>
      messages.filter((m) => (m.data as { log?: string }).log === "tool call failed");
    await waitUntil(() => failures().length === 1, "the failed call's log message");
    const entry = must(failures()[0], "the failed call's log message");
    expect(entry.level).toBe("info");
    expect((entry.data as { tool?: string }).tool).toBe("campaign_metrics");
    for (const m of messages) expect(JSON.stringify(m)).not.toContain(h.sandbox.secret_key);

    messages.length = 0;
    await h.client.setLoggingLevel("error");
    const again = await h.call("campaign_metrics", { task_from: "last week" });
    expect(again.isError).toBe(true);
    // Messages arrive in order: once a later call's message is in, any the quiet call had sent
    // would be in too.
    await h.client.setLoggingLevel("info");
    await h.call("campaign_metrics", { task_from: "last week" });
    await waitUntil(() => failures().length >= 1, "the next call's log message");
    expect(failures()).toHaveLength(1);
  });
});
