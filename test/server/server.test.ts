import { existsSync, readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MetricsResponse } from "../../src/api/schemas.js";
import type { CrmApi } from "../../src/api/types.js";
import { loadConfig } from "../../src/config.js";
import { createServer } from "../../src/server.js";
import { TOOLS } from "../../src/tools/index.js";
import { must } from "../helpers/must.js";

async function connect(server: ReturnType<typeof createServer>) {
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "test", version: "1.0.0" });
  await server.server.connect(b);
  await client.connect(a);
  return client;
}

let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "crm-server-"));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

/**
 * One snapshot file per tool, keys sorted, so a change to what the model sees shows in review
 * where it is. A tool without a snapshot fails; UPDATE_TOOL_SNAPSHOTS=1 (with vitest -u) writes it.
 */
async function expectToolSnapshots(tools: Array<{ name: string }>): Promise<void> {
  const dir = join(import.meta.dirname, "__snapshots__", "tools");
  const update = process.env.UPDATE_TOOL_SNAPSHOTS === "1";
  for (const tool of tools) {
    const file = join(dir, `${tool.name}.json`);
    expect(update || existsSync(file), `missing snapshot ${file}`).toBe(true);
    await expect(`${JSON.stringify(sortKeys(tool), null, 2)}\n`).toMatchFileSnapshot(file);
  }
  const names = new Set(tools.map((t) => `${t.name}.json`));
  expect(
    readdirSync(dir).filter((f) => !names.has(f)),
    "snapshots of tools that are gone",
  ).toEqual([]);
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
  );
}

describe("what the model sees", () => {
  it("every tool has a title, a description with an example, annotations and an output schema", async () => {
    const built = createServer(loadConfig({ CRM_DATA_DIR: dataDir }));
    const client = await connect(built);
    try {
      const { tools } = await client.listTools();
      // The contract's tools, all of them, and the ones src/tools registers.
      expect(tools.map((t) => t.name)).toEqual([
        "campaign_metrics",
        "start_export",
        "check_export",
        "summarize_export",
        "query_export",
        "recommend_products",
      ]);
      expect(tools.map((t) => t.name)).toEqual(TOOLS.map((t) => t.name));
      for (const tool of tools) {
        expect(tool.title, tool.name).toBeTruthy();
        // A ceiling, not a floor: every conversation pays for each description.
        expect(tool.description?.length ?? 0, tool.name).toBeLessThanOrEqual(800);
        expect(tool.description?.split("\n").length ?? 0, tool.name).toBeGreaterThanOrEqual(3);
        expect(tool.description, tool.name).toContain(`Example: ${tool.name} {`);
        expect(tool.annotations, tool.name).toBeDefined();
        expect(typeof tool.annotations?.readOnlyHint, tool.name).toBe("boolean");
        expect(tool.annotations?.openWorldHint, tool.name).toBe(true);
        expect(tool.outputSchema?.type, tool.name).toBe("object");
        expect(Object.keys(tool.outputSchema?.properties ?? {}), tool.name).toContain("summary");
        // One entry per tool, named like the tool: a file, or a folder when it needs several.
        const entry = join("src/tools", tool.name.replace(/_/g, "-"));
        expect(existsSync(`${entry}.ts`) || existsSync(join(entry, "index.ts")), tool.name).toBe(
          true,
        );
      }
      // start_export alone creates something (a job, a file); every other tool only reads.
      expect(Object.fromEntries(tools.map((t) => [t.name, t.annotations?.readOnlyHint]))).toEqual({
        campaign_metrics: true,
        start_export: false,
        check_export: true,
        summarize_export: true,
        query_export: true,
        recommend_products: true,
      });
      expect(tools.find((t) => t.name === "start_export")?.annotations).toMatchObject({
        destructiveHint: false,
        idempotentHint: false,
      });
      // src/tools/ holds the tools and their list, nothing else.
      const entries = readdirSync("src/tools").map((e) => e.replace(/\.ts$/, ""));
      expect(entries.sort()).toEqual(
        ["index", ...tools.map((t) => t.name.replace(/_/g, "-"))].sort(),
      );
      expect(client.getInstructions()).toContain("10 export-job creations per 10 minutes");
      await expectToolSnapshots(tools);
    } finally {
      await client.close();
      await built.close();
    }
  });
});

describe("sandbox mode", () => {
  it("starts the sandbox lazily and labels every result as sandbox data", async () => {
    const built = createServer(
      loadConfig({ CRM_DATA_DIR: dataDir, CRM_SANDBOX_NOW: "2026-11-22T09:00:00+09:00" }),
    );
    const client = await connect(built);
    try {
      const r = (await client.callTool({
        name: "recommend_products",
        arguments: { slot_key: "best_sellers", limit: 3 },
      })) as { content: Array<{ text?: string }>; structuredContent: Record<string, unknown> };
      expect(r.content[0]?.text).toContain("Sandbox data");
      expect(r.structuredContent.data_source).toBe("sandbox");
      // The sandbox's own products serve as the catalog.
      const products = r.structuredContent.products as Array<{ name?: string }>;
      expect(products.every((p) => typeof p.name === "string" && p.name.length > 0)).toBe(true);
      const bad = (await client.callTool({
        name: "recommend_products",
        arguments: { slot_key: "x", limit: 0 },
      })) as {
        isError: boolean;
        content: Array<{ text?: string }>;
      };
      expect(bad.isError).toBe(true);
      expect(bad.content[0]?.text).toContain("Sandbox data");
    } finally {
      await client.close();
      await built.close();
    }
  });
});

describe("campaign_metrics text budget", () => {
  it("stays under 4,000 characters for 500 campaigns by default", async () => {
    const campaigns: MetricsResponse["campaigns"] = Array.from({ length: 500 }, (_, i) => ({
      _id: `cmp_${String(i).padStart(12, "0")}`,
      name: `캠페인 이름이 꽤 긴 편인 정기 발송 캠페인 번호 ${i}`,
      tags: ["태그"],
      schedule_type: i % 2 === 0 ? "once" : "recurring",
      conversion: { event_type: "purchase", window_unit: "d", window_amount: 7 },
      is_ab_test: false,
      tasks: [task(`t${i}`, `cmp_${String(i).padStart(12, "0")}`, 1000 + i)],
    }));
    // Only the metrics endpoint is needed: a 500-campaign world is not something the sandbox makes.
    const api: CrmApi = {
      campaignMetrics: async () => ({ campaigns }),
      recommend: unused,
      createExportJob: unused,
      getExportJob: unused,
      downloadExport: unused,
    };
    const built = createServer(loadConfig({ CRM_DATA_DIR: dataDir }), {
      api,
      now: () => Date.parse("2026-11-22T00:00:00Z"),
    });
    const client = await connect(built);
    try {
      const r = (await client.callTool({ name: "campaign_metrics", arguments: {} })) as {
        content: Array<{ text?: string }>;
        structuredContent: {
          campaigns: unknown[];
          more_not_shown: number;
          totals: { sent_count: number };
        };
      };
      const text = must(r.content[0]?.text, "text of the result");
      expect(text.length).toBeLessThan(4000);
      expect(text).toContain("480 more not shown");
      expect(r.structuredContent.campaigns.length).toBe(20);
      expect(r.structuredContent.totals.sent_count).toBe(
        campaigns.reduce((a, _, i) => a + 1000 + i, 0),
      );
    } finally {
      await client.close();
      await built.close();
    }
  });
});

async function unused(): Promise<never> {
  throw new Error("not used in this test");
}

function task(
  id: string,
  campaignId: string,
  sent: number,
): MetricsResponse["campaigns"][number]["tasks"][number] {
  const money = { value: 0, currency: "KRW" };
  return {
    _id: id,
    campaign_id: campaignId,
    scheduled_at: "2026-11-10T01:00:00.000Z",
    sent_at: "2026-11-10T01:00:00.000Z",
    channel: "app_push",
    sent_count: sent,
    received_count: sent - 10,
    open_count: 100,
    click_count: 10,
    click_target_counts: [],
    purchase_count: 5,
    purchase_count_by_click: 1,
    purchase_count_by_open: 5,
    purchase_count_by_received: 5,
    revenue: 150000,
    revenue_currency: "KRW",
    revenue_by_click: money,
    revenue_by_open: money,
    revenue_by_received: money,
    cost: 2000,
    cost_currency: "KRW",
    sent_user_count: sent,
    received_user_count: sent - 10,
    open_user_count: 90,
    click_user_count: 9,
    purchase_user_count_by_click: 1,
    purchase_user_count_by_open: 5,
    purchase_user_count_by_received: 5,
    open_rate: 0.1,
    conversion_rate: 0.05,
    roas: 75,
  };
}

describe("argument checking through the MCP client", () => {
  it("names the bad argument, the nearest allowed one and the allowed values, under the sandbox banner", async () => {
    const built = createServer(
      loadConfig({ CRM_DATA_DIR: dataDir, CRM_SANDBOX_NOW: "2026-11-22T09:00:00+09:00" }),
    );
    const client = await connect(built);
    const call = async (name: string, args: Record<string, unknown>) => {
      const r = (await client.callTool({ name, arguments: args })) as {
        isError?: boolean;
        content: Array<{ text?: string }>;
      };
      expect(r.isError).toBe(true);
      const text = must(r.content[0]?.text, "text of the result");
      expect(text).toContain("Sandbox data");
      expect(text).not.toContain("Input validation error");
      return text;
    };
    try {
      const typo = await call("start_export", {
        type: "campaign_event_data",
        campain_id: "cmp_1",
      });
      expect(typo).toContain('unknown argument "campain_id" (did you mean "campaign_id"?)');
      expect(typo).toContain(
        "Allowed arguments: type, campaign_id, scenario_id, from, to, wait_seconds, force.",
      );
      const form = await call("start_export", { type: "task_form", campaign_id: "cmp_1" });
      expect(form).toContain(
        'type "task_form" is not allowed; use one of "campaign_event_data", "scenario_daily_metrics"',
      );
      const schedule = await call("campaign_metrics", { campaign_schedule_type: "one" });
      expect(schedule).toContain('"once", "recurring", "api_trigger"');
      const wait = await call("check_export", { job_id: "exp_1", wait_seconds: "10" });
      expect(wait).toContain(
        'wait_seconds must be a number, not a string "10" (write 10 without quotes)',
      );
      expect(wait).toContain("Nothing was sent to the service");
    } finally {
      await client.close();
      await built.close();
    }
  });
});
