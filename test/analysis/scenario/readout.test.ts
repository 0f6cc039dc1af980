import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { summarizeFile } from "../../../src/analysis/index.js";
import type { ScenarioSummary } from "../../../src/analysis/schemas.js";
import { buildXlsx, METRICS } from "./xlsx-fixture.js";

/** Trends and branch verdicts of a scenario export, checked against figures worked out here. */

type Day = { date: string; send: number; sendUsers: number; open: number; openUsers: number };

function metricsOf(d: Omit<Day, "date">): number[] {
  const v: Record<string, number> = {
    "발송 수(건)": d.send,
    "발송 수(명)": d.sendUsers,
    "오픈 수(건)": d.open,
    "오픈 수(명)": d.openUsers,
  };
  return METRICS.map((m) => v[m] ?? 0);
}

const down: Day[] = [
  { date: "2025-03-01", send: 100, sendUsers: 100, open: 30, openUsers: 30 },
  { date: "2025-03-02", send: 90, sendUsers: 90, open: 20, openUsers: 20 },
  { date: "2025-03-03", send: 40, sendUsers: 40, open: 10, openUsers: 10 },
  { date: "2025-03-04", send: 20, sendUsers: 20, open: 5, openUsers: 5 },
];
const flat: Day[] = [
  { date: "2025-03-01", send: 50, sendUsers: 50, open: 10, openUsers: 10 },
  { date: "2025-03-02", send: 51, sendUsers: 51, open: 20, openUsers: 20 },
  { date: "2025-03-03", send: 49, sendUsers: 49, open: 10, openUsers: 10 },
  { date: "2025-03-04", send: 50, sendUsers: 50, open: 10, openUsers: 10 },
];
const total = (days: Day[]) =>
  days.reduce(
    (a, d) => ({
      send: a.send + d.send,
      sendUsers: a.sendUsers + d.sendUsers,
      open: a.open + d.open,
      openUsers: a.openUsers + d.openUsers,
    }),
    { send: 0, sendUsers: 0, open: 0, openUsers: 0 },
  );

let dir: string;
let result: ScenarioSummary;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "scenario-readout-"));
  const header = ["#", "채널", "A/B 테스트 분기", "메시지 노드 ID", ...METRICS];
  // Branch A: 건 open rate higher (more repeat opens) but 명 open rate lower than B.
  const a = { send: 200, sendUsers: 200, open: 120, openUsers: 40 };
  const b = { send: 200, sendUsers: 200, open: 80, openUsers: 70 };
  const day = (t: typeof a) => [["2025-03-01", ...metricsOf(t)]];
  const file = join(dir, "readout.xlsx");
  await writeFile(
    file,
    await buildXlsx([
      {
        name: "요약",
        rows: [
          header,
          [1, "앱푸시", null, "n-down", ...metricsOf(total(down))],
          [2, "앱푸시", null, "n-flat", ...metricsOf(total(flat))],
          [3, "알림톡", "A", "n-a", ...metricsOf(a)],
          [4, "알림톡", "B", "n-b", ...metricsOf(b)],
          [5, "SMS", "B·A", "n-ba", ...metricsOf({ send: 0, sendUsers: 0, open: 0, openUsers: 0 })],
          [6, "SMS", "B·B", "n-bb", ...metricsOf({ send: 0, sendUsers: 0, open: 0, openUsers: 0 })],
        ],
      },
      {
        name: "#1",
        rows: [["n-down"], ["날짜", ...METRICS], ...down.map((d) => [d.date, ...metricsOf(d)])],
      },
      {
        name: "#2",
        rows: [["n-flat"], ["날짜", ...METRICS], ...flat.map((d) => [d.date, ...metricsOf(d)])],
      },
      { name: "#3", rows: [["n-a"], ["날짜", ...METRICS], ...day(a)] },
      { name: "#4", rows: [["n-b"], ["날짜", ...METRICS], ...day(b)] },
    ]),
  );
  const r = await summarizeFile(file);
  if (r.kind !== "scenario_daily_metrics") throw new Error("wrong kind");
  result = r;
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("scenario trends and branch verdicts", () => {
  it("finds best and worst days and a down or flat direction", () => {
    const [d, f] = result.nodes;
    expect(d?.trend).toMatchObject({
      metric: "발송 수(건)",
      best_day: { date: "2025-03-01", value: 100 },
      worst_day: { date: "2025-03-04", value: 20 },
      first_half_average: 95,
      second_half_average: 30,
      direction: "down",
    });
    expect(f?.trend?.direction).toBe("flat");
    expect(f?.trend?.best_day).toEqual({ date: "2025-03-02", value: 51 });
    expect(f?.trend?.worst_day).toEqual({ date: "2025-03-03", value: 49 });
  });

  it("ranks arms by the users' open rate it tests, with the p-value worked out here", () => {
    const top = result.branches.find((x) => x.parent === "");
    // By users B leads (70/200 vs 40/200), though A has the higher 건 open rate.
    const p = (70 + 40) / 400;
    const z = (70 / 200 - 40 / 200) / Math.sqrt(p * (1 - p) * (2 / 200));
    expect(z).toBeCloseTo(3.359355, 5);
    // Two-sided p = erfc(z / sqrt 2) = 0.00078125 (computed with Python's math.erfc).
    // The text shows the 명 rates it ranks and tests, before the 건 rates.
    expect(top?.verdict).toContain(
      "open rate by users (명) A 20.0% (40 of 200 users) vs B 35.0% (70 of 200 users); B leads (significant at 95%, p < 0.001). Per send (건): A 60.0% of ",
    );
    expect(top?.verdict.match(/by users/g)).toHaveLength(1);
    expect(top?.p_value).toBeCloseTo(0.00078125, 6);
    expect(top?.significant).toBe(true);
    expect(top?.leader).toBe("B");
    expect(top?.metric).toBe("open_rate_users");
    expect(top?.arms.map((x) => [x.branch, x.send_users, x.open_users, x.open_rate_users])).toEqual(
      [
        ["A", 200, 40, 0.2],
        ["B", 200, 70, 0.35],
      ],
    );
    expect(top?.arms.map((x) => [x.branch, x.open_rate])).toEqual([
      ["A", 0.6],
      ["B", 0.4],
    ]);
  });

  it("says when nested arms have sent nothing", () => {
    const nested = result.branches.find((x) => x.parent === "B");
    expect(nested?.verdict).toBe("Inside branch B: no sends in B·A or B·B yet.");
    expect(nested?.leader).toBeNull();
    expect(nested?.p_value).toBeNull();
    expect(nested?.significant).toBe(false);
  });
});
