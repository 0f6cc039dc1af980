import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { DEFAULT_RESULT_TOKENS, MAX_RESULT_TOKENS } from "../../src/config-values.js";
import { estimateTokens, fitToBudget } from "../../src/mcp/result-budget.js";
import { createServer } from "../../src/server.js";
import { HEADER, toCsv } from "../analysis/campaign/fixture.js";
import { type FixtureServer, startFixtureServer } from "../helpers/fixture-server.js";
import { SANDBOX_NOW, toResult } from "../helpers/tool-harness.js";

describe("fitToBudget", () => {
  const row = (i: number) => ({ id: `r${i}`, label: `라운드 ${i}`, sent: i * 1000, rate: i / 7 });

  it("leaves a small result untouched", () => {
    const value = { rows: [row(1), row(2)], total: 3 };
    const fitted = fitToBudget(value, 1_000);
    expect(fitted.cuts).toEqual([]);
    expect(fitted.value).toBe(value);
  });

  it("cuts the tail of the largest list, keeps its order, reports the cut and never mutates", () => {
    const rows = Array.from({ length: 400 }, (_, i) => row(i));
    const value = { rows, small: [row(1)], hours: Array.from({ length: 24 }, (_, i) => i) };
    const fitted = fitToBudget(value, 2_000);
    expect(fitted.tokens).toBeLessThanOrEqual(2_000);
    expect(estimateTokens(JSON.stringify(fitted.value))).toBe(fitted.tokens);
    const kept = fitted.value.rows as Array<{ id: string }>;
    expect(kept.length).toBeGreaterThan(10);
    expect(kept.map((r) => r.id)).toEqual(rows.slice(0, kept.length).map((r) => r.id));
    expect(fitted.cuts).toEqual([{ field: "rows", shown: kept.length, total: 400 }]);
    // As much as fits: one more row would not.
    const oneMore = { ...fitted.value, rows: rows.slice(0, kept.length + 1) };
    expect(estimateTokens(JSON.stringify(oneMore))).toBeGreaterThan(2_000);
    expect(value.rows).toHaveLength(400);
    expect(fitted.value.hours).toHaveLength(24);
  });

  it("shortens lists inside list items before dropping whole items", () => {
    const campaigns = Array.from({ length: 30 }, (_, c) => ({
      id: `c${c}`,
      tasks: Array.from({ length: 40 }, (_, t) => row(c * 100 + t)),
    }));
    const fitted = fitToBudget({ campaigns }, 4_000);
    expect(fitted.tokens).toBeLessThanOrEqual(4_000);
    const kept = fitted.value.campaigns as Array<{ tasks: unknown[] }>;
    expect(kept).toHaveLength(30);
    const tasksCut = fitted.cuts.find((c) => c.field === "campaigns[].tasks");
    expect(tasksCut?.total).toBe(1_200);
    expect(tasksCut?.shown).toBe(kept.reduce((n, c) => n + c.tasks.length, 0));
  });

  it("counts Hangul a token a character, ASCII about 3.5 characters a token", () => {
    // Four Hangul syllables and three ASCII characters (a space and parentheses).
    expect(estimateTokens("발송 수(건)")).toBe(4 + 1);
    expect(estimateTokens("a".repeat(35))).toBe(10);
  });
});

async function connect(dataDir: string, env: Record<string, string> = {}) {
  const built = createServer(
    loadConfig({
      CRM_BASE_URL: fixture.url,
      CRM_APPLICATION_ID: "app_budget",
      CRM_SECRET_KEY: "sk_budget_test_key_0001",
      CRM_DATA_DIR: dataDir,
      ...env,
    }),
    { now: () => Date.parse(SANDBOX_NOW) },
  );
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "test", version: "1.0.0" });
  await built.server.connect(b);
  await client.connect(a);
  return {
    client,
    close: async () => {
      await client.close();
      await built.close();
    },
  };
}

let fixture: FixtureServer;
let dataDir: string;
beforeAll(async () => {
  fixture = await startFixtureServer();
  dataDir = await mkdtemp(join(tmpdir(), "crm-budget-"));
});
afterAll(async () => {
  await fixture?.close();
  await rm(dataDir, { recursive: true, force: true });
});

/** 500 campaigns with a round a week over 180 days: more than the API would usually hold. */
function metricsOf500Campaigns(): unknown {
  const money = { value: 1234, currency: "KRW" };
  const start = Date.parse("2026-05-26T01:00:00Z");
  return {
    campaigns: Array.from({ length: 500 }, (_, c) => ({
      _id: `cmp_${String(c).padStart(4, "0")}_${"x".repeat(16)}`,
      name: `가을 세일 캠페인 ${c} – 앱푸시 리마인드 ${"긴 이름 ".repeat(4)}`,
      tags: ["가을", "세일", `tag-${c % 17}`],
      schedule_type: c % 3 === 0 ? "recurring" : "one_time",
      conversion: { event_type: "purchase", window_unit: "d", window_amount: 7 },
      is_ab_test: c % 4 === 0,
      tasks: Array.from({ length: 26 }, (_, t) => {
        const at = new Date(start + t * 7 * 86_400_000 + c * 60_000).toISOString();
        return {
          _id: `task_${c}_${t}`,
          campaign_id: `cmp_${c}`,
          scheduled_at: at,
          sent_at: at,
          channel: t % 2 === 0 ? "app_push" : "kakao_alimtalk",
          sent_count: 1000 + t,
          received_count: 900 + t,
          open_count: 300,
          click_count: 40,
          click_target_counts: [{ click_target: "banner", count: 40, user_count: 30 }],
          purchase_count: 5,
          purchase_count_by_click: 2,
          purchase_count_by_open: 2,
          purchase_count_by_received: 1,
          revenue: 150000,
          revenue_currency: "KRW",
          revenue_by_click: money,
          revenue_by_open: money,
          revenue_by_received: money,
          cost: 3000,
          cost_currency: "KRW",
          sent_user_count: 1000,
          received_user_count: 900,
          open_user_count: 280,
          click_user_count: 35,
          purchase_user_count_by_click: 2,
          purchase_user_count_by_open: 2,
          purchase_user_count_by_received: 1,
          open_rate: 0.3333,
          conversion_rate: 0.0055,
          roas: 50,
        };
      }),
    })),
  };
}

describe("every result within its budget, on the largest inputs", () => {
  it("campaign_metrics: 180 days, 500 campaigns with tasks: cut, said so, the whole kept", async () => {
    fixture.reset();
    fixture.setDefault({ json: metricsOf500Campaigns() });
    const s = await connect(dataDir);
    try {
      const r = toResult(
        await s.client.callTool({
          name: "campaign_metrics",
          arguments: {
            task_from: "2026-05-26",
            task_to: "2026-11-21",
            top_n: 500,
            include_tasks: true,
          },
        }),
      );
      expect(r.isError, r.text).toBeFalsy();
      const tokens = estimateTokens(JSON.stringify(r.structured));
      expect(tokens).toBeLessThanOrEqual(DEFAULT_RESULT_TOKENS);
      expect(r.structured.truncated).toBe(true);
      const more = r.structured.more as {
        omitted: Array<{ field: string; shown: number; total: number }>;
        full_result: string;
      };
      expect(more.omitted.length).toBeGreaterThan(0);
      expect(r.text).toContain(more.full_result);
      // The totals are whole whatever was cut.
      expect((r.structured.totals as { sent_count: number }).sent_count).toBe(
        500 * (26 * 1000 + (25 * 26) / 2),
      );
      const whole = await s.client.readResource({ uri: more.full_result });
      const first = whole.contents[0];
      const full = JSON.parse(first !== undefined && "text" in first ? first.text : "{}") as {
        campaigns: unknown[];
      };
      expect(full.campaigns).toHaveLength(500);
      const cut = more.omitted.find((o) => o.field === "campaigns");
      expect(cut?.total).toBe(500);
      expect((r.structured.campaigns as unknown[]).length).toBe(cut?.shown);
    } finally {
      await s.close();
    }
  });

  it("summarize_export: a 120-round A/B export stays within the budget and the hard ceiling", async () => {
    const rows: string[][] = [HEADER];
    for (let t = 0; t < 120; t++) {
      const day = String((t % 28) + 1).padStart(2, "0");
      const at = `2026-${String(Math.floor(t / 28) + 6).padStart(2, "0")}-${day} 10:00:00`;
      for (const group of ["그룹A", "그룹B", "대조군"]) {
        for (let u = 0; u < 6; u++) {
          const user = `u${t}-${u}`;
          const type = group === "대조군" ? "control_assigned" : "message_sent";
          rows.push([
            `task_${t}`,
            at,
            group,
            type,
            user,
            `pu_${u}`,
            at,
            "app_push",
            "",
            "",
            "{}",
            "{}",
            "{}",
          ]);
          if (group !== "대조군") {
            rows.push([
              `task_${t}`,
              at,
              group,
              "message_received",
              user,
              `pu_${u}`,
              at,
              "app_push",
              "",
              "",
              "{}",
              "{}",
              "{}",
            ]);
          }
        }
      }
    }
    const file = join(dataDir, "rounds-120.csv");
    await writeFile(file, toCsv(rows));
    // 360 round rows fit neither the default budget nor the largest one.
    for (const budget of [undefined, String(MAX_RESULT_TOKENS)]) {
      const s = await connect(
        dataDir,
        budget === undefined ? {} : { CRM_RESULT_MAX_TOKENS: budget },
      );
      try {
        const r = toResult(
          await s.client.callTool({ name: "summarize_export", arguments: { file } }),
        );
        expect(r.isError, r.text).toBeFalsy();
        const tokens = estimateTokens(JSON.stringify(r.structured));
        expect(tokens).toBeLessThanOrEqual(Number(budget ?? DEFAULT_RESULT_TOKENS));
        const rounds = r.structured.rounds as unknown[];
        expect(r.structured.truncated, `budget ${budget}`).toBe(true);
        const more = r.structured.more as { omitted: Array<{ field: string; total: number }> };
        // The result says how many rounds there are, though it lists fewer.
        expect(more.omitted.find((o) => o.field === "rounds")?.total).toBe(360);
        expect(rounds.length).toBeLessThan(360);
        expect(r.structured.rows).toBe(rows.length - 1);
      } finally {
        await s.close();
      }
    }
  });

  it("refuses a budget above the hard ceiling at start-up, naming the variable", () => {
    expect(() =>
      loadConfig({ CRM_DATA_DIR: dataDir, CRM_RESULT_MAX_TOKENS: String(MAX_RESULT_TOKENS + 1) }),
    ).toThrow(/CRM_RESULT_MAX_TOKENS: must be at most 20000/);
  });
});
