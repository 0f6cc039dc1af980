import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { summarizeFile } from "../../src/analysis/index.js";
import type { CampaignSummary } from "../../src/analysis/schemas.js";
import type { Baseline } from "../../src/report/baseline-section.js";
import { reportText } from "../../src/report/i18n/index.js";
import type { MetricsComparison } from "../../src/report/metrics-comparison.js";
import { buildReport, chartTable, markCount } from "../../src/report/model.js";
import { rowScale } from "../../src/report/view/box-scale.js";
import { must } from "../helpers/must.js";
import { type Harness, startHarness } from "../helpers/tool-harness.js";
import { writeCampaignCsv } from "./fixtures.js";

/**
 * The two comparisons of the report model: campaign_metrics' change against another window as a
 * table with arrows and signs (from a real call on the sandbox, and from known figures), and a
 * campaign's rates against its channel's recent campaigns as a box chart, in English and Korean.
 */

let h: Harness;
let dir: string;
let campaign: CampaignSummary;

beforeAll(async () => {
  h = await startHarness();
  dir = await mkdtemp(join(tmpdir(), "report-comparison-"));
  const c = await summarizeFile(await writeCampaignCsv(dir));
  if (c.kind !== "campaign_event_data") throw new Error("the fixture summarized as a scenario");
  campaign = c;
}, 60_000);

afterAll(async () => {
  await h?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

const change = (previous: number | null, current: number | null, pct: number | null) => ({
  previous,
  current,
  delta: previous === null || current === null ? null : current - previous,
  pct,
});

/** A campaign_metrics result with known figures; only what the report reads. */
function metricsWith(comparison: MetricsComparison) {
  const sums = {
    task_count: 3,
    sent_count: 1200,
    received_count: 1100,
    open_count: 132,
    click_count: 40,
    purchase_count: 9,
    revenue: { KRW: 90_000 },
    cost: { KRW: 1_000 },
    computed_open_rate: 0.12,
    computed_conversion_rate: 0.068,
  };
  return {
    window: { utc: { from: "2026-09-30T15:00:00.000Z", to: "2026-10-31T15:00:00.000Z" } },
    campaigns: [
      { ...sums, _id: "cmp_1", name: "가을 세일", schedule_type: "one_time", is_ab_test: false },
    ],
    totals: sums,
    comparison,
  };
}

const KNOWN: MetricsComparison = {
  compare_to: "previous_period",
  task_from: "2026-08-30T00:00:00+09:00",
  task_to: "2026-10-01T00:00:00+09:00",
  matched_campaigns: 2,
  change: {
    sent_count: change(1000, 1200, 20),
    received_count: change(1100, 1100, 0),
    open_count: change(0, 132, null),
    click_count: change(null, 40, null),
    purchase_count: change(12, 9, -25),
    computed_open_rate: { previous: 0.1458, current: 0.12, delta: -0.0258, pct: -17.7 },
    computed_click_rate: { previous: 0.05, current: 0.0502, delta: 0.0002, pct: 0.4 },
    computed_conversion_rate: change(null, null, null),
    revenue: { KRW: change(100_000, 90_000, -10), USD: change(0, 30, null) },
    cost: { KRW: change(800, 1_000, 25) },
  },
};

describe("campaign_metrics' comparison in the report", () => {
  it("a row per metric: then, now, and the change with its arrow and sign; rates in pp", () => {
    const model = buildReport(metricsWith(KNOWN), "view");
    expect(model.sections.map((s) => s.id)).toEqual(["comparison", "campaigns", "rounds"]);
    const section = model.sections[0];
    expect(section?.title).toBe("Against the previous period");
    expect(section?.text).toEqual([
      "▲ more, ▼ less than then; rates change in percentage points (pp).",
    ]);
    const table = section?.tables[0];
    // The window ends at midnight of Oct 1 (exclusive): its last day is Sep 30.
    expect(table?.caption).toBe("Previous period: Aug 30, 2026 – Sep 30, 2026 (KST)");
    expect(table?.columns).toEqual(["Metric", "Previous", "Current", "Change"]);
    expect(table?.numeric).toEqual([false, true, true, true]);
    expect(table?.rows).toEqual([
      ["Sent", "1,000", "1,200", "▲ +20.0%"],
      ["Received", "1,100", "1,100", "no change"],
      ["Opens", "0", "132", "▲ +132"],
      ["Clicks", "-", "40", "new"],
      ["Purchases", "12", "9", "▼ −25.0%"],
      ["Open rate", "14.6%", "12.0%", "▼ −2.6 pp"],
      ["Click rate", "5.0%", "5.0%", "▲ +0.02 pp"],
      ["Conversion rate (by opens)", "-", "-", "-"],
      ["Revenue (KRW)", "₩100,000", "₩90,000", "▼ −10.0%"],
      ["Revenue (USD)", "0", "$30.00", "▲ +$30.00"],
      ["Cost (KRW)", "₩800", "₩1,000", "▲ +25.0%"],
    ]);
    // The colour repeats the arrow; cost has none (more cost is not worse by itself).
    expect(table?.tones?.map((r) => r[3])).toEqual([
      "better",
      null,
      "better",
      null,
      "worse",
      "worse",
      "better",
      null,
      "worse",
      "better",
      null,
    ]);
    expect(table?.tones?.every((r) => r.slice(0, 3).every((x) => x === null))).toBe(true);
  });

  it("in Korean: the same table in its words, rates in %p", () => {
    const model = buildReport(metricsWith(KNOWN), "view", reportText("ko"));
    const section = model.sections[0];
    expect(section?.title).toBe("직전 기간 대비");
    const table = section?.tables[0];
    expect(table?.caption).toBe("직전 기간: 2026. 8. 30. ~ 2026. 9. 30. (한국 시간)");
    expect(table?.columns).toEqual(["지표", "이전 기간", "이번 기간", "변화"]);
    expect(table?.rows[0]).toEqual(["발송", "1,000", "1,200", "▲ +20.0%"]);
    expect(table?.rows[1]?.[3]).toBe("변화 없음");
    expect(table?.rows[3]?.[3]).toBe("새로 생김");
    expect(table?.rows[5]).toEqual(["오픈율", "14.6%", "12.0%", "▼ −2.6%p"]);
    expect(table?.rows[8]).toEqual(["매출 (KRW)", "₩100,000", "₩90,000", "▼ −10.0%"]);
  });

  it("the same period last year, a window of instants, and nothing to compare", () => {
    const lastYear = buildReport(
      metricsWith({
        ...KNOWN,
        compare_to: "same_period_last_year",
        task_from: "2025-10-01T09:30:00+09:00",
        task_to: "2025-10-08T09:30:00+09:00",
      }),
      "view",
    );
    expect(lastYear.sections[0]?.title).toBe("Against the same period last year");
    expect(lastYear.sections[0]?.tables[0]?.caption).toBe(
      "Same period last year: Oct 1, 2025, 09:30 – Oct 8, 2025, 09:30 (KST)",
    );
    const none = buildReport(metricsWith({ ...KNOWN, matched_campaigns: 0 }), "view");
    expect(none.sections[0]?.text).toEqual([
      "No campaign matching these filters had rounds then: nothing to compare.",
    ]);
    expect(none.sections[0]?.tables).toEqual([]);
  });

  it("a real compare_to call on the sandbox: each metric's row agrees with the result", async () => {
    const args = { task_from: "2026-10-01", task_to: "2026-11-01", top_n: 5 };
    const plain = await h.call("campaign_metrics", args);
    expect(buildReport(plain.structured, "view").sections.map((s) => s.id)).toEqual([
      "campaigns",
      "rounds",
    ]);
    const result = await h.call("campaign_metrics", { ...args, compare_to: "previous_period" });
    const comparison = result.structured.comparison as MetricsComparison & {
      totals: { sent_count: number };
    };
    const model = buildReport(result.structured, "view");
    const table = model.sections[0]?.tables[0];
    if (table === undefined) throw new Error("no comparison table");
    const money = Object.keys(comparison.change.revenue ?? {}).length;
    expect(table.rows).toHaveLength(8 + money + Object.keys(comparison.change.cost ?? {}).length);
    const sent = table.rows[0];
    expect(sent?.[1]).toBe(comparison.totals.sent_count.toLocaleString("en-US"));
    const keys = [
      "sent_count",
      "received_count",
      "open_count",
      "click_count",
      "purchase_count",
      "computed_open_rate",
      "computed_click_rate",
      "computed_conversion_rate",
    ] as const;
    keys.forEach((key, i) => {
      const delta = comparison.change[key]?.delta ?? 0;
      const cell = must(table.rows[i]?.[3], `the change cell of ${key}`);
      const direction = delta > 0 ? /^▲ \+/ : delta < 0 ? /^▼ −/ : /^no change$/;
      expect(cell, key).toMatch(direction);
      expect(cell.endsWith(" pp"), key).toBe(key.startsWith("computed_"));
    });
    // The sandbox's windows differ in both directions, so both arrows show.
    const arrows = table.rows.map((r) => r[3]?.slice(0, 1));
    expect(arrows).toContain("▲");
    expect(arrows).toContain("▼");
  });
});

function baselineOf(channel: string): Baseline {
  return {
    channel,
    campaigns: 12,
    window: { from: "2026-06-02", to: "2026-10-28" },
    metrics: {
      delivery: { value: 0.97, median: 0.95, p25: 0.93, p75: 0.96, flag: null },
      open: { value: 0.31, median: 0.18, p25: 0.15, p75: 0.21, flag: "above" },
      click: { value: 0.004, median: 0.03, p25: 0.025, p75: 0.036, flag: "below" },
      conversion: { value: null, median: 0.07, p25: 0.05, p75: 0.08, flag: null },
      failure: { value: 0.03, median: 0.05, p25: 0.04, p75: 0.07, flag: null },
    },
  };
}

describe("a campaign against its channel's recent campaigns", () => {
  it("a box per rate with the campaign as a dot; flagged rates said in words", () => {
    const channel = campaign.delivery.by_channel[0]?.channel ?? "app_push";
    const model = buildReport({ ...campaign, baseline: baselineOf(channel) }, "view");
    expect(model.sections.map((s) => s.id)).toEqual([
      "funnel",
      "baseline",
      "ab",
      "timing",
      "failures",
    ]);
    const section = model.sections[1];
    expect(section?.title).toBe("Against its channel's recent campaigns");
    expect(section?.text).toEqual([
      "Open rate 31.0% is above its channel's usual range (median 18.0%).",
      "Click rate 0.4% is below its channel's usual range (median 3.0%).",
    ]);
    const chart = section?.charts[0];
    if (chart === undefined) throw new Error("no baseline chart");
    expect(chart.type).toBe("box");
    expect(chart.title).toBe(`Rates against ${channel}'s recent campaigns`);
    expect(chart.categories).toEqual([
      "Delivery rate",
      "Open rate",
      "Click rate",
      "Conversion rate",
      "Failure rate",
    ]);
    expect(chart.note).toBe(
      `Box: the middle half of ${channel}'s last 12 campaigns (Jun 2, 2026 to Oct 28, 2026), from the 25th to the 75th percentile, with a line at the median; dot: this campaign. The usual range reaches 1.5 box lengths beyond the box.`,
    );
    // A dot per rate the campaign has a value of.
    expect(markCount(chart)).toBe(4);
    const table = chartTable(chart);
    expect(table.columns).toEqual([
      "Rate",
      "This campaign",
      "Median",
      "25th pct",
      "75th pct",
      "Range",
    ]);
    expect(table.rows).toEqual([
      ["Delivery rate", "97.0%", "95.0%", "93.0%", "96.0%", "within the usual range"],
      ["Open rate", "31.0%", "18.0%", "15.0%", "21.0%", "above the usual range"],
      ["Click rate", "0.4%", "3.0%", "2.5%", "3.6%", "below the usual range"],
      ["Conversion rate", "-", "7.0%", "5.0%", "8.0%", "-"],
      ["Failure rate", "3.0%", "5.0%", "4.0%", "7.0%", "within the usual range"],
    ]);
  });

  it("in Korean, and every rate within its range said in one line", () => {
    const quiet = baselineOf("app_push");
    for (const m of Object.values(quiet.metrics)) m.flag = null;
    const model = buildReport({ ...campaign, baseline: quiet }, "view", reportText("ko"));
    const section = model.sections.find((s) => s.id === "baseline");
    expect(section?.title).toBe("같은 채널의 최근 캠페인 대비");
    expect(section?.text).toEqual([
      "모든 비율이 app_push 채널 최근 캠페인 12개의 평소 범위 안에 있습니다.",
    ]);
    const chart = section?.charts[0];
    expect(chart?.categories).toEqual(["발송 성공률", "오픈율", "클릭률", "전환율", "실패율"]);
    if (chart === undefined) throw new Error("no baseline chart");
    expect(chartTable(chart, reportText("ko")).rows[1]).toEqual([
      "오픈율",
      "31.0%",
      "18.0%",
      "15.0%",
      "21.0%",
      "평소 범위 안",
    ]);
  });

  it("nothing drawn without a baseline, or with one the report cannot read", () => {
    const ids = (data: unknown) => buildReport(data, "view").sections.map((s) => s.id);
    const without = ids(campaign);
    expect(without).not.toContain("baseline");
    expect(ids({ ...campaign, baseline: null })).toEqual(without);
    expect(ids({ ...campaign, baseline: { channel: "sms", campaigns: 3 } })).toEqual(without);
    expect(
      ids({ ...campaign, baseline: { channel: "sms", campaigns: 3, metrics: { open: "high" } } }),
    ).toEqual(without);
    // Only the rates given are drawn.
    const one = buildReport(
      {
        ...campaign,
        baseline: { ...baselineOf("sms"), metrics: { open: baselineOf("sms").metrics.open } },
      },
      "view",
    );
    const chart = one.sections.find((s) => s.id === "baseline")?.charts[0];
    expect(chart?.categories).toEqual(["Open rate"]);
    expect(chart?.note).toContain("sms's last 12 campaigns");
  });
});

describe("a box row's axis", () => {
  it("runs in round steps over every value, within 0% and 100%", () => {
    // 4 pp in 1 pp steps: the ends are the values on them.
    expect(rowScale([0.93, 0.95, 0.96, 0.97])).toEqual({
      lo: 0.93,
      hi: 0.97,
      ticks: [0.93, 0.94, 0.95, 0.96, 0.97],
    });
    expect(rowScale([0.31, 0.18, 0.15, 0.21])).toEqual({
      lo: 0.15,
      hi: 0.35,
      ticks: [0.15, 0.2, 0.25, 0.3, 0.35],
    });
    expect(rowScale([0.004, 0.03, 0.025, 0.036])).toEqual({
      lo: 0,
      hi: 0.04,
      ticks: [0, 0.01, 0.02, 0.03, 0.04],
    });
    // Tiny rates keep a readable span; the axis never goes below 0 or above 100%.
    expect(rowScale([0, 0.0004])).toEqual({ lo: 0, hi: 0.001, ticks: [0, 0.001] });
    expect(rowScale([0.99, 1, 0.98])).toEqual({
      lo: 0.98,
      hi: 1,
      ticks: [0.98, 0.985, 0.99, 0.995, 1],
    });
    // One value alone still has a box to stand in.
    const one = rowScale([0.05]);
    expect(one.hi).toBeGreaterThan(one.lo);
  });
});
