import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scenarioSummaryOutputSchema, summarizeFile } from "../../../src/analysis/index.js";
import type { ScenarioSummary } from "../../../src/analysis/schemas.js";
import { mulberry32 } from "../campaign/fixture.js";
import { buildXlsx, METRICS, withRatios } from "./xlsx-fixture.js";

interface NodeSpec {
  number: number;
  channel: string;
  branch: string;
  nodeId: string;
  days: Record<string, number>[]; // daily counts per metric
  dates: string[];
}

const COUNT_KEYS = [
  "발송 수(건)",
  "발송 수(명)",
  "오픈 수(건)",
  "오픈 수(명)",
  "전환 수(건)",
  "전환 수(명)",
  "전환 수익",
  "집행 비용",
];

function makeNodes(): NodeSpec[] {
  const rnd = mulberry32(11);
  const specs: [string, string][] = [
    ["앱푸시", ""],
    ["알림톡", "A"],
    ["알림톡", "B"],
    ["친구톡", "B·A"],
    ["친구톡", "B·B"],
  ];
  return specs.map(([channel, branch], i) => {
    const zero = branch === "B·B"; // a node that has not sent anything: no daily rows
    const dates = zero
      ? []
      : ["2025-03-01", "2025-03-02", "2025-03-04", "2025-03-05", "2025-03-06"];
    const days = dates.map((_, d) => {
      const sends = Math.floor(100 + rnd() * 50 + (i === 1 ? d * 40 : 0));
      const users = sends - Math.floor(rnd() * 10);
      const opens = Math.floor(sends * (0.2 + rnd() * 0.2));
      const openUsers = Math.floor(opens * 0.9);
      const conv = Math.floor(opens * 0.1);
      return {
        "발송 수(건)": sends,
        "발송 수(명)": users,
        "오픈 수(건)": opens,
        "오픈 수(명)": openUsers,
        "전환 수(건)": conv,
        "전환 수(명)": conv,
        "전환 수익": conv * 15000,
        "집행 비용": sends * 8,
      };
    });
    return { number: i + 1, channel, branch, nodeId: `node_${i + 1}_x`, days, dates };
  });
}

function sumDays(n: NodeSpec): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of COUNT_KEYS) out[k] = n.days.reduce((a, d) => a + (d[k] ?? 0), 0);
  return out;
}

let dir: string;
let file: string;
const nodes = makeNodes();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "scenario-summary-"));
  file = join(dir, "scenario.xlsx");
  const summaryRows: (string | number | null)[][] = [
    ["시나리오 일별 성과"],
    ["기간", "2025-03-01 ~ 2025-03-07"],
    [],
    ["#", "채널", "A/B 테스트 분기", "메시지 노드 ID", ...METRICS],
  ];
  for (const n of nodes) {
    const t = withRatios(sumDays(n));
    // Node 2's summary disagrees with its daily sheet by one send, which must be reported.
    if (n.number === 2) t["발송 수(건)"] = (t["발송 수(건)"] ?? 0) + 1;
    summaryRows.push([
      n.number,
      n.channel,
      n.branch || null,
      n.nodeId,
      ...METRICS.map((m) => t[m] ?? 0),
    ]);
  }
  const sheets = [{ name: "요약", rows: summaryRows }];
  for (const n of nodes) {
    const rows: (string | number | null)[][] = [
      [`#${n.number} ${n.channel}${n.branch ? ` ${n.branch}` : ""}`],
      [n.nodeId],
      ["날짜", ...METRICS],
    ];
    n.days.forEach((d, k) => {
      const t = withRatios(d);
      rows.push([n.dates[k] as string, ...METRICS.map((m) => t[m] ?? 0)]);
    });
    sheets.push({ name: `#${n.number} ${n.channel}${n.branch ? ` ${n.branch}` : ""}`, rows });
  }
  await writeFile(file, await buildXlsx(sheets));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("summarizeFile on a scenario XLSX", () => {
  let result: ScenarioSummary;
  beforeAll(async () => {
    const r = await summarizeFile(file);
    if (r.kind !== "scenario_daily_metrics") throw new Error("wrong kind");
    result = r;
  });

  it("matches the schema and reads every node with contract fields", () => {
    expect(scenarioSummaryOutputSchema.safeParse(result).success).toBe(true);
    expect(result.nodes).toHaveLength(nodes.length);
    for (const [i, n] of nodes.entries()) {
      const got = result.nodes[i];
      expect(got).toMatchObject({
        number: n.number,
        channel: n.channel,
        branch: n.branch,
        node_id: n.nodeId,
        days: n.days.length,
      });
      const expected = withRatios(sumDays(n));
      if (n.number === 2) expected["발송 수(건)"] = (expected["발송 수(건)"] ?? 0) + 1;
      for (const m of METRICS) expect(got?.totals[m]).toBeCloseTo(expected[m] ?? 0, 9);
      expect(Object.keys(got?.totals ?? {})).toEqual(METRICS);
    }
    // The workbook's Korean channel label, and the code campaign results use for it (spec 2.4).
    const codes = Object.fromEntries(result.nodes.map((n) => [n.channel, n.channel_code]));
    expect(codes).toEqual({ 앱푸시: "app_push", 알림톡: "alimtalk", 친구톡: "friendtalk" });
  });

  it("reports the node whose summary is not the sum of its days", () => {
    const bad = result.nodes.filter((n) => n.mismatches.length > 0);
    expect(bad.map((n) => n.number)).toEqual([2]);
    const sends = nodes[1]?.days.reduce((a, d) => a + (d["발송 수(건)"] ?? 0), 0) ?? 0;
    expect(bad[0]?.mismatches).toEqual([
      { metric: "발송 수(건)", summary: sends + 1, daily_sum: sends },
    ]);
  });

  it("recomputes total ratios from summed counts, 0 for a 0 denominator", () => {
    const sums: Record<string, number> = {};
    for (const k of COUNT_KEYS) {
      sums[k] = nodes.reduce((a, n) => a + (sumDays(n)[k] ?? 0), 0);
    }
    sums["발송 수(건)"] = (sums["발송 수(건)"] ?? 0) + 1;
    const expected = withRatios(sums);
    for (const m of METRICS) expect(result.totals[m]).toBeCloseTo(expected[m] ?? 0, 5);
    const zeroNode = result.nodes.find((n) => n.branch === "B·B");
    expect(zeroNode?.days).toBe(0);
    expect(zeroNode?.totals["오픈율(건)"]).toBe(0);
  });

  it("gives each node's trend and compares sibling branches", () => {
    const n2 = nodes[1] as NodeSpec;
    const sends = n2.days.map((d) => d["발송 수(건)"] ?? 0);
    const best = sends.indexOf(Math.max(...sends));
    expect(result.nodes[1]?.trend?.best_day.date).toBe(n2.dates[best]);
    expect(result.nodes[1]?.trend?.direction).toBe("up");
    const top = result.branches.find((b) => b.parent === "");
    expect(top?.arms.map((a) => a.branch)).toEqual(["A", "B"]);
    // Arm B covers its nested branches.
    const bSends = nodes
      .filter((n) => n.branch.startsWith("B"))
      .reduce((a, n) => a + (sumDays(n)["발송 수(건)"] ?? 0), 0);
    expect(top?.arms[1]?.sends).toBe(bSends);
    const nested = result.branches.find((b) => b.parent === "B");
    expect(nested?.arms.map((a) => a.branch)).toEqual(["B·A", "B·B"]);
  });
});
