import { describe, expect, it } from "vitest";
import { SCENARIO_CHANNELS, SCENARIO_METRIC_COLUMNS } from "../../../src/api/schemas.js";
import type { ScenarioMetrics } from "../../../src/sandbox/world/types.js";
import { must } from "../../helpers/must.js";
import { world } from "./fixtures.js";

const w = world();
const COUNT_COLUMNS = [
  "발송 수(건)",
  "발송 수(명)",
  "오픈 수(건)",
  "오픈 수(명)",
  "전환 수(건)",
  "전환 수(명)",
  "전환 수익",
  "집행 비용",
] as const;

function expectRatios(m: ScenarioMetrics): void {
  const div = (a: number, b: number) => (b === 0 ? 0 : a / b);
  expect(m["오픈율(건)"]).toBeCloseTo(div(m["오픈 수(건)"], m["발송 수(건)"]), 12);
  expect(m["오픈율(명)"]).toBeCloseTo(div(m["오픈 수(명)"], m["발송 수(명)"]), 12);
  expect(m["전환율(건)"]).toBeCloseTo(div(m["전환 수(건)"], m["오픈 수(건)"]), 12);
  expect(m["전환율(명)"]).toBeCloseTo(div(m["전환 수(명)"], m["오픈 수(명)"]), 12);
  expect(m.ROAS).toBeCloseTo(div(m["전환 수익"], m["집행 비용"]), 9);
  expect(m.객단가).toBeCloseTo(div(m["전환 수익"], m["전환 수(건)"]), 9);
  expect(m.CAC).toBeCloseTo(div(m["집행 비용"], m["전환 수(건)"]), 9);
}

describe("scenarios (spec 2.5)", () => {
  it("have message nodes in flow order with Korean channel labels and nested branches", () => {
    expect(w.scenarios.length).toBeGreaterThanOrEqual(3);
    const branches = new Set<string>();
    for (const scenario of w.scenarios) {
      expect(scenario._id).toMatch(/^scn_/);
      expect(scenario.nodes.map((n) => n.number)).toEqual(scenario.nodes.map((_, i) => i + 1));
      for (const node of scenario.nodes) {
        expect(SCENARIO_CHANNELS).toContain(node.channel);
        branches.add(node.branch);
      }
      // A merge: a node outside any branch after branched nodes.
    }
    expect([...branches]).toEqual(expect.arrayContaining(["", "A", "B", "B·A", "B·B"]));
    const merged = w.scenarios.some((s) => {
      const firstBranched = s.nodes.findIndex((n) => n.branch !== "");
      return firstBranched >= 0 && s.nodes.slice(firstBranched).some((n) => n.branch === "");
    });
    expect(merged).toBe(true);
  });

  it("report days with sends only; summary counts are the sums of the days; ratios follow the rules", () => {
    let zeroNodes = 0;
    for (const scenario of w.scenarios) {
      const report = w.scenarioReport(scenario, "2026-05-01", "2026-11-30");
      expect(report.map((r) => r.node)).toEqual(scenario.nodes);
      for (const { summary, days } of report) {
        expect(Object.keys(summary)).toEqual([...SCENARIO_METRIC_COLUMNS]);
        const dates = days.map((d) => d.date);
        expect(dates).toEqual([...dates].sort());
        expect(new Set(dates).size).toBe(dates.length);
        for (const day of days) {
          expect(day.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
          expect(day.date < "2026-11-20").toBe(true);
          expect(day.metrics["발송 수(건)"]).toBeGreaterThan(0);
          for (const column of COUNT_COLUMNS)
            expect(Number.isInteger(day.metrics[column])).toBe(true);
          expect(day.metrics["발송 수(명)"]).toBeLessThanOrEqual(day.metrics["발송 수(건)"]);
          expect(day.metrics["오픈 수(명)"]).toBeLessThanOrEqual(day.metrics["발송 수(명)"]);
          expect(day.metrics["전환 수(명)"]).toBeLessThanOrEqual(day.metrics["오픈 수(명)"]);
          expectRatios(day.metrics);
        }
        for (const column of COUNT_COLUMNS) {
          expect(summary[column]).toBe(days.reduce((s, d) => s + d.metrics[column], 0));
        }
        expectRatios(summary);
        if (days.length === 0) {
          zeroNodes++;
          for (const column of SCENARIO_METRIC_COLUMNS) expect(summary[column]).toBe(0);
        }
      }
      // Some days of the period have no sends and are absent.
      const period = must(report[0], "node of the scenario report").days.length;
      expect(period).toBeLessThan(214);
    }
    expect(zeroNodes).toBeGreaterThanOrEqual(1);
  });

  it("limits days to the requested dates and is deterministic", () => {
    const scenario = w.scenarios[0];
    if (scenario === undefined) throw new Error("no scenario");
    const month = w.scenarioReport(scenario, "2026-09-01", "2026-09-30");
    const days = month.flatMap((r) => r.days.map((d) => d.date));
    expect(days.length).toBeGreaterThan(0);
    expect(days.every((d) => d >= "2026-09-01" && d <= "2026-09-30")).toBe(true);
    const single = w.scenarioReport(scenario, "2026-09-10", "2026-09-10");
    const wide = w.scenarioReport(scenario, "2026-08-01", "2026-10-31");
    for (const [i, node] of single.entries()) {
      expect(node.days).toEqual(wide[i]?.days.filter((d) => d.date === "2026-09-10"));
    }
    expect(w.scenarioReport(scenario, "2026-09-01", "2026-09-30")).toEqual(month);
    expect(
      w.scenarioReport(scenario, "2030-01-01", "2030-01-31").every((r) => r.days.length === 0),
    ).toBe(true);
  });
});
