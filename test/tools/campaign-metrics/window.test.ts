import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MetricsResponse } from "../../../src/api/schemas.js";
import type { CrmApi } from "../../../src/api/types.js";
import { loadConfig } from "../../../src/config.js";
import { createServer } from "../../../src/server.js";
import { type Harness, SANDBOX_NOW, startHarness, toResult } from "../../helpers/tool-harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

type Task = MetricsResponse["campaigns"][number]["tasks"][number];

describe("campaign_metrics windows and next steps", () => {
  it("takes an ISO date-time task_to alone: the 30 days before it, end exclusive", async () => {
    const r = await h.call("campaign_metrics", { task_to: "2026-11-20T15:30:00+09:00" });
    expect(r.isError, r.text).toBeFalsy();
    const window = r.structured.window as { task_from: string; task_to: string };
    expect(window.task_to).toBe("2026-11-20T15:30:00+09:00");
    const expectedFrom = new Date(Date.parse("2026-11-20T15:30:00+09:00") - 30 * 86_400_000);
    expect(Date.parse(window.task_from)).toBe(expectedFrom.getTime());
    // A date-only task_to still includes that day and starts 30 whole days earlier.
    const dateOnly = await h.call("campaign_metrics", { task_to: "2026-11-20" });
    expect((dateOnly.structured.window as { task_from: string }).task_from).toBe(
      "2026-10-22T00:00:00+09:00",
    );
  });

  it("rejects an unknown argument by name before any request", async () => {
    const before = h.sandbox.faults.requestCounts.campaign_metrics;
    const r = await h.call("campaign_metrics", { task_from: "2026-11-01", campaign_id: "x" });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('unknown argument "campaign_id" (did you mean "campaign_ids"?)');
    expect(h.sandbox.faults.requestCounts.campaign_metrics).toBe(before);
  });

  it("gives next_step: an export of the top campaign over the window's dates", async () => {
    const r = await h.call("campaign_metrics", {
      task_from: "2026-11-01",
      task_to: "2026-11-14",
      top_n: 1,
    });
    const top = (r.structured.campaigns as Array<{ _id: string }>)[0]?._id;
    expect(top).toBeTypeOf("string");
    const next = r.structured.next_step as string;
    expect(next.startsWith("start_export ")).toBe(true);
    expect(JSON.parse(next.slice("start_export ".length))).toEqual({
      type: "campaign_event_data",
      campaign_id: top,
      from: "2026-11-01",
      to: "2026-11-14",
    });
    expect(r.text).toContain(next);
  });

  it("suggests dropping filters, or a longer window, when nothing matches", async () => {
    const filtered = await h.call("campaign_metrics", {
      task_from: "2026-11-01",
      task_to: "2026-11-14",
      name_contains: "no campaign is called this",
    });
    expect(filtered.isError).toBeFalsy();
    expect(filtered.structured.matched_campaigns).toBe(0);
    const next = filtered.structured.next_step as string;
    expect(next).toContain("campaign_metrics");
    expect(next).toContain("without filters");
    expect(next).not.toContain("name_contains");
    expect(filtered.text).toContain(next);
    // Long before the sandbox's data: no filters to drop, so look further back.
    const early = await h.call("campaign_metrics", {
      task_from: "2020-01-01",
      task_to: "2020-01-10",
    });
    expect(early.structured.matched_campaigns).toBe(0);
    const widen = JSON.parse(
      (early.structured.next_step as string).replace(/^campaign_metrics (\{.*\}).*$/, "$1"),
    ) as { task_from: string; task_to: string };
    expect(Date.parse(widen.task_from)).toBe(
      Date.parse("2020-01-01T00:00:00+09:00") - 90 * 86_400_000,
    );
    expect(widen.task_to).toBe("2020-01-11T00:00:00+09:00");
  });
});

describe("campaign_metrics against a service returning rounds outside the window", () => {
  it("sums only rounds scheduled in [task_from, task_to) and rounds rates to 4 decimals", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "crm-metrics-"));
    // Spec 4.4 says which campaigns are included, not which of their tasks: the sandbox filters,
    // a real service might not, so this one returns every round.
    const tasks = [
      task("before", "2026-10-31T14:59:59.000Z", 1000, 1 / 3),
      task("inside", "2026-10-31T15:00:00.000Z", 300, 2 / 7),
      task("last", "2026-11-14T14:59:59.000Z", 200, 0.1),
      task("after", "2026-11-14T15:00:00.000Z", 5000, 0.5),
    ];
    const api: CrmApi = {
      campaignMetrics: async () => ({
        campaigns: [
          {
            _id: "cmp_1",
            name: "one",
            tags: [],
            schedule_type: "recurring",
            conversion: { event_type: "purchase", window_unit: "d", window_amount: 7 },
            is_ab_test: false,
            tasks,
          },
        ],
      }),
      recommend: unused,
      createExportJob: unused,
      getExportJob: unused,
      downloadExport: unused,
    };
    const built = createServer(loadConfig({ CRM_DATA_DIR: dataDir }), {
      api,
      now: () => Date.parse(SANDBOX_NOW),
    });
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: "test", version: "1.0.0" });
    try {
      await built.server.connect(b);
      await client.connect(a);
      const r = toResult(
        await client.callTool({
          name: "campaign_metrics",
          arguments: { task_from: "2026-11-01", task_to: "2026-11-14", include_tasks: true },
        }),
      );
      expect(r.isError, r.text).toBeFalsy();
      const c = (r.structured.campaigns as Array<Record<string, unknown>>)[0];
      expect(c?.task_count).toBe(2);
      expect(c?.sent_count).toBe(500);
      // Newest first.
      expect((r.structured.tasks as Array<{ _id: string }>).map((t) => t._id)).toEqual([
        "last",
        "inside",
      ]);
      // opens are 1/3 of received in every round here: 0.3333, not 0.33333333333333331.
      expect(c?.computed_open_rate).toBe(0.3333);
      const rates = (r.structured.tasks as Array<{ open_rate: number }>).map((t) => t.open_rate);
      expect(rates).toEqual([0.1, 0.2857]);
    } finally {
      await client.close();
      await built.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

async function unused(): Promise<never> {
  throw new Error("not used in this test");
}

function task(id: string, scheduledAt: string, received: number, openRate: number): Task {
  const money = { value: 0, currency: "KRW" };
  return {
    _id: id,
    campaign_id: "cmp_1",
    scheduled_at: scheduledAt,
    sent_at: scheduledAt,
    channel: "app_push",
    sent_count: received,
    received_count: received,
    open_count: received / 3,
    click_count: 0,
    click_target_counts: [],
    purchase_count: 0,
    purchase_count_by_click: 0,
    purchase_count_by_open: 0,
    purchase_count_by_received: 0,
    revenue: 0,
    revenue_currency: "KRW",
    revenue_by_click: money,
    revenue_by_open: money,
    revenue_by_received: money,
    cost: 0,
    cost_currency: "KRW",
    sent_user_count: received,
    received_user_count: received,
    open_user_count: 0,
    click_user_count: 0,
    purchase_user_count_by_click: 0,
    purchase_user_count_by_open: 0,
    purchase_user_count_by_received: 0,
    open_rate: openRate,
    conversion_rate: 0,
    roas: 0,
  };
}

describe("campaign_metrics is bounded", () => {
  it("refuses a window beyond about 3 years before any request, with the narrower call", async () => {
    const before = h.sandbox.faults.requestCounts.campaign_metrics;
    const r = await h.call("campaign_metrics", { task_from: "0001-01-01", task_to: "9999-12-31" });
    expect(r.isError).toBe(true);
    expect(r.text).toContain("at most 1,095 days");
    // The narrower call ends at the start of tomorrow (by the sandbox clock), 1,095 days long.
    expect(r.text).toContain(
      'campaign_metrics {"task_from":"2023-11-24T00:00:00+09:00","task_to":"2026-11-23T00:00:00+09:00"}',
    );
    expect(h.sandbox.faults.requestCounts.campaign_metrics).toBe(before);
  });

  it("reports progress per request of a split window and sends each request once", async () => {
    const before = h.sandbox.faults.requestCounts.campaign_metrics;
    const messages: string[] = [];
    const result = await h.client.callTool(
      { name: "campaign_metrics", arguments: { task_from: "2024-11-22", task_to: "2026-11-21" } },
      { onprogress: (p) => messages.push(String(p.message)) },
    );
    expect(result.isError).toBeFalsy();
    const requests = (result.structuredContent as { window: { requests: number } }).window.requests;
    expect(requests).toBe(5);
    expect(h.sandbox.faults.requestCounts.campaign_metrics - before).toBe(5);
    expect(messages.filter((m) => m.startsWith("Campaign metrics: request"))).toHaveLength(5);
    expect(messages.at(-1)).toContain("request 5 of 5");
  });
});
