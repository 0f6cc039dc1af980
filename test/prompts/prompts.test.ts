import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, startHarness } from "../helpers/tool-harness.js";

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
  "scenario_health_check",
];

describe("prompts", () => {
  it("lists the common reports with their arguments", async () => {
    const { prompts } = await h.client.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual([...PROMPTS].sort());
    const ab = prompts.find((p) => p.name === "ab_test_readout");
    expect(ab?.arguments?.find((a) => a.name === "campaign_id")?.required).toBe(true);
    expect(ab?.arguments?.find((a) => a.name === "from")?.required).toBeFalsy();
  });

  it("gives a plan of tool calls that names the campaign and the range", async () => {
    const r = await h.client.getPrompt({
      name: "ab_test_readout",
      arguments: { campaign_id: "cmp_x1", from: "2026-11-01", to: "2026-11-14" },
    });
    const message = r.messages[0];
    const text = message?.content.type === "text" ? message.content.text : "";
    expect(text).toContain("from 2026-11-01 to 2026-11-14 (inclusive)");
    expect(text).toContain(
      'start_export {"type": "campaign_event_data", "campaign_id": "cmp_x1", "from": "2026-11-01", "to": "2026-11-14"}',
    );
    expect(text).toContain("summarize_export");
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
    // campaign_metrics' default window is 30 days, completion looks 90 days back.
    for (const id of ids) expect(all.completion.values).toContain(id);
    const first = ids[0] ?? "";
    const typed = first.slice(0, first.length - 1);
    const some = await h.client.complete({
      ref: { type: "ref/prompt", name: "delivery_failure_investigation" },
      argument: { name: "campaign_id", value: typed },
    });
    expect(some.completion.values).toContain(first);
    for (const v of some.completion.values) expect(v.startsWith(typed)).toBe(true);
  });

  it("completes scenario IDs from the export ledger", async () => {
    const scenario = h.sandbox.scenario_ids[0] ?? "";
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
    const entry = messages.find((m) => (m.data as { log?: string }).log === "tool call failed");
    expect(entry?.level).toBe("info");
    expect((entry?.data as { tool?: string } | undefined)?.tool).toBe("campaign_metrics");
    for (const m of messages) expect(JSON.stringify(m)).not.toContain(h.sandbox.secret_key);

    messages.length = 0;
    await h.client.setLoggingLevel("error");
    const again = await h.call("campaign_metrics", { task_from: "last week" });
    expect(again.isError).toBe(true);
    expect(messages).toEqual([]);
  });
});
