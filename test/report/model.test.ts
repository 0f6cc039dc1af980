import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { summarizeFile } from "../../src/analysis/index.js";
import type { CampaignSummary, ScenarioSummary } from "../../src/analysis/schemas.js";
import { differenceInterval } from "../../src/report/campaign-ab-section.js";
import { reportHtmlWithData } from "../../src/report/html.js";
import { reportText } from "../../src/report/i18n/index.js";
import { buildReport, chartTable, markCount, ReportDataError } from "../../src/report/model.js";
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

  it("every chart has a table with one row per category (a date written as one)", () => {
    const en = reportText("en");
    for (const model of [buildReport(campaign, "view"), buildReport(scenario, "view")]) {
      for (const chart of model.sections.flatMap((s) => s.charts)) {
        const table = chartTable(chart);
        expect(table.rows).toHaveLength(chart.categories.length);
        expect(table.rows.map((r) => r[0])).toEqual(
          chart.categories.map((c) => en.f.categoryFull(c)),
        );
      }
    }
    const daily = buildReport(scenario, "view").sections[0]?.charts[0];
    expect(chartTable(daily as never).rows[0]?.[0]).toBe("Mar 1, 2025");
    expect(chartTable(daily as never, reportText("ko")).rows[0]?.[0]).toBe("2025. 3. 1.");
  });

  it("Korean and English give the same report but for the words and figures", () => {
    for (const data of [campaign, scenario]) {
      const ko = buildReport(data, "file", reportText("ko"));
      const en = buildReport(data, "file", reportText("en"));
      const skeleton = (m: typeof ko) => ({
        kind: m.kind,
        kpis: m.kpis.map((k) => k.note !== undefined),
        sections: m.sections.map((s) => ({
          id: s.id,
          text: s.text.length,
          tables: s.tables.map((t) => [t.columns.length, t.rows.length, t.numeric]),
          charts: s.charts.map((c) => [
            c.id,
            c.type,
            c.format,
            c.note !== undefined,
            c.series.map((x) => x.values),
          ]),
        })),
        notes: m.notes.length,
      });
      expect(skeleton(ko)).toEqual(skeleton(en));
      expect(ko.title).not.toBe(en.title);
    }
    const ko = buildReport(campaign, "file", reportText("ko"));
    expect(ko.title).toBe("캠페인 내보내기: campaign-캠페인.csv");
    expect(ko.kpis.map((k) => k.label)).toEqual([
      "행",
      "발송",
      "수신",
      "오픈",
      "전환 (발송 그룹)",
      "매출 (발송 그룹)",
    ]);
    const tests = ko.sections.find((s) => s.id === "ab")?.tables[0];
    expect(tests?.columns).toEqual(["비교", "비율", "비교 대상", "p값", "판정"]);
    // Each verdict says what the test said, in Korean.
    const comparisons = [
      ...campaign.ab_test.comparisons,
      ...(campaign.ab_test.control?.comparison ? [campaign.ab_test.control.comparison] : []),
    ];
    expect(tests?.rows.map((r) => r[4])).toEqual(
      comparisons.map((c) =>
        c.significant ? "유의함 (95% 신뢰수준)" : "유의하지 않음 (95% 신뢰수준)",
      ),
    );
    // Dates of the file the Korean way: the funnel's span and each round's bar.
    expect(ko.subtitle).toBe("행 785개 · 발송 회차 2회 · 2025. 3. 1. 10:00 ~ 2025. 3. 8. 10:00");
    expect(ko.sections[0]?.charts[0]?.categories[0]).toBe("task-1 3. 1. 10:00 그룹A");
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
    // Oldest first, in KST, each date and time the locale's way.
    expect(rounds?.categories).toEqual([
      "11/10, 10:00 가을 세일 알림",
      "11/20, 10:00 가을 세일 알림",
    ]);
    const korean = buildReport(
      { ...data, tasks: [task("t1", "2026-11-10T01:00:00Z")] },
      "view",
      reportText("ko"),
    );
    expect(korean.sections[1]?.charts[0]?.categories).toEqual(["11. 10. 10:00 가을 세일 알림"]);
    expect(korean.kpis.find((k) => k.label === "매출")?.value).toBe("₩120,000");
  });

  it("refuses data it cannot draw with a message that says what it expected", () => {
    expect(() => buildReport(null, "view")).toThrow(ReportDataError);
    expect(() => buildReport({ kind: "other" }, "view")).toThrow(
      /summarize_export or campaign_metrics/,
    );
  });

  it("has no interval for a group without users", () => {
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
