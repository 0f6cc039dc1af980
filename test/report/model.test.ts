import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { summarizeFile } from "../../src/analysis/index.js";
import type { CampaignSummary, ScenarioSummary } from "../../src/analysis/schemas.js";
import { differenceInterval } from "../../src/report/campaign-ab-section.js";
import { reportHtmlWithData } from "../../src/report/html.js";
import { buildReport, chartTable, markCount, ReportDataError } from "../../src/report/model.js";
import { formatSeconds } from "../../src/report/value-text.js";
import { SCENARIO_DAYS, SCENARIO_NODES, writeCampaignCsv, writeScenarioXlsx } from "./fixtures.js";

// Reads the built page, `dist/report/view.html`, so it runs after the build (vitest.config.ts).

let dir: string;
let campaign: CampaignSummary;
let scenario: ScenarioSummary;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "report-model-"));
  const c = await summarizeFile(await writeCampaignCsv(dir));
  const s = await summarizeFile(await writeScenarioXlsx(dir));
  if (c.kind !== "campaign_event_data" || s.kind !== "scenario_daily_metrics") {
    throw new Error("fixtures summarized as the wrong kind");
  }
  campaign = c;
  scenario = s;
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("report model", () => {
  it("campaign CSV: funnel per round, A/B with intervals, opens by hour, failures", () => {
    const model = buildReport(campaign, "view");
    const charts = new Map(model.sections.flatMap((s) => s.charts).map((c) => [c.id, c]));
    expect([...charts.keys()]).toEqual([
      "funnel",
      "ab-rates",
      "ab-difference",
      "opens-by-hour",
      "first-open",
      "failures-by-code",
      "delivery-by-channel",
    ]);
    const funnel = charts.get("funnel");
    expect(funnel?.categories).toHaveLength(campaign.rounds.length);
    expect(funnel?.series.map((s) => s.name)).toEqual([
      "Sent",
      "Received",
      "Failed",
      "Opens",
      "Conversions",
    ]);
    expect(funnel?.series[0]?.values).toEqual(campaign.rounds.map((r) => r.sent));
    expect(charts.get("opens-by-hour")?.series[0]?.values).toEqual(campaign.timing.opens_by_hour);
    expect(markCount(charts.get("failures-by-code") as never)).toBe(campaign.failures.length);
    // The 그룹A - 그룹B open-rate interval, recomputed by hand from the group readouts.
    const [a, b] = campaign.ab_test.groups;
    if (a === undefined || b === undefined) throw new Error("fixture has no A/B groups");
    const diff = charts.get("ab-difference");
    const p1 = b.opened_users / b.received_users;
    const p2 = a.opened_users / a.received_users;
    const se = Math.sqrt((p1 * (1 - p1)) / b.received_users + (p2 * (1 - p2)) / a.received_users);
    expect(diff?.categories[0]).toBe(`Open rate: ${a.group} − ${b.group}`);
    expect(diff?.series[0]?.values[0]).toBeCloseTo(p2 - p1, 10);
    expect(diff?.series[1]?.values[0]).toBeCloseTo(p2 - p1 - 1.959964 * se, 10);
    expect(diff?.series[2]?.values[0]).toBeCloseTo(p2 - p1 + 1.959964 * se, 10);
    expect(model.kpis.find((k) => k.label === "Sent")?.value).toBe(
      campaign.totals.sent.toLocaleString("en-US"),
    );
  });

  it("every chart has a table with one row per category", () => {
    for (const model of [buildReport(campaign, "view"), buildReport(scenario, "view")]) {
      for (const chart of model.sections.flatMap((s) => s.charts)) {
        const table = chartTable(chart);
        expect(table.rows).toHaveLength(chart.categories.length);
        expect(table.rows.map((r) => r[0])).toEqual(chart.categories);
      }
    }
  });

  it("scenario XLSX: a daily line per node, A against B, the node table", () => {
    expect(scenario.daily.dates).toHaveLength(SCENARIO_DAYS);
    expect(scenario.daily.series).toHaveLength(SCENARIO_NODES.length);
    const model = buildReport(scenario, "view");
    const charts = model.sections.flatMap((s) => s.charts);
    expect(charts.map((c) => c.id)).toEqual([
      "daily-sends",
      "daily-open-rate",
      "daily-conversions",
      "branch-0",
    ]);
    const sends = charts[0];
    expect(sends?.series[1]?.name).toBe("#2 node_2_가입환영");
    expect(markCount(sends as never)).toBe(SCENARIO_NODES.length * SCENARIO_DAYS);
    const nodes = model.sections.find((s) => s.id === "nodes")?.tables[0];
    expect(nodes?.rows.map((r) => r[3])).toEqual(scenario.nodes.map((n) => n.node_id));
  });

  it("campaign_metrics: ranked campaigns, and rounds only when include_tasks gave them", () => {
    const sums = {
      task_count: 2,
      sent_count: 1000,
      received_count: 900,
      open_count: 300,
      click_count: 10,
      purchase_count: 12,
      revenue: { KRW: 120_000 },
      cost: {},
      computed_open_rate: 0.3333,
      computed_conversion_rate: 0.04,
    };
    const data = {
      window: { kst: "2026-11-01 to 2026-11-22 (inclusive, KST)" },
      matched_campaigns: 1,
      more_not_shown: 0,
      campaigns: [
        { ...sums, _id: "cmp_1", name: "가을 세일 알림", schedule_type: "once", is_ab_test: false },
      ],
      totals: sums,
    };
    const without = buildReport(data, "view");
    expect(without.kind).toBe("campaign_metrics");
    expect(without.sections[0]?.charts[0]?.categories).toEqual(["가을 세일 알림"]);
    expect(without.sections[1]?.charts).toEqual([]);
    expect(without.sections[1]?.text[0]).toContain("include_tasks");
    const task = (id: string, at: string) => ({
      _id: id,
      campaign_id: "cmp_1",
      scheduled_at: at,
      channel: "app_push",
      sent_count: 500,
      received_count: 450,
      open_count: 150,
      purchase_count: 6,
    });
    const withTasks = buildReport(
      {
        ...data,
        tasks: [task("t2", "2026-11-20T01:00:00Z"), task("t1", "2026-11-10T01:00:00Z")],
      },
      "view",
    );
    const rounds = withTasks.sections[1]?.charts[0];
    // Oldest first, in KST.
    expect(rounds?.categories).toEqual([
      "11-10 10:00 가을 세일 알림",
      "11-20 10:00 가을 세일 알림",
    ]);
  });

  it("refuses data it cannot draw with a message that says what it expected", () => {
    expect(() => buildReport(null, "view")).toThrow(ReportDataError);
    expect(() => buildReport({ kind: "other" }, "view")).toThrow(
      /summarize_export or campaign_metrics/,
    );
  });

  it("formats durations and intervals", () => {
    expect(formatSeconds(42)).toBe("42 s");
    expect(formatSeconds(600)).toBe("10.0 min");
    expect(formatSeconds(7200)).toBe("2.0 h");
    expect(differenceInterval(0, 0, 1, 2)).toBeNull();
  });

  it("embedded data cannot close the script element", async () => {
    const html = await reportHtmlWithData({
      kind: "x",
      name: "</script><script>alert(1)</script>",
    });
    const slot = html.slice(html.indexOf('id="report-data">'));
    expect(slot.slice(0, slot.indexOf("</script>"))).toContain("\\u003c/script>");
    const json = slot.slice('id="report-data">'.length, slot.indexOf("</script>"));
    expect(JSON.parse(json).name).toBe("</script><script>alert(1)</script>");
  });
});
