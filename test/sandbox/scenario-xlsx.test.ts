import ExcelJS from "exceljs";
import { describe, expect, it } from "vitest";
import {
  SCENARIO_CHANNELS,
  SCENARIO_METRIC_COLUMNS,
  SCENARIO_SUMMARY_LEAD_COLUMNS,
} from "../../src/api/schemas.js";
import { client, manualClock, sandboxForFile } from "./support.js";

// Spec 2.5 (the scenario XLSX) and date rule 5 of 4.2, read back with exceljs.
const clock = manualClock();
const sandbox = await sandboxForFile({ clock: clock.read });
const api = client(sandbox, clock);
const FROM = "2024-03-01";
const TO = "2024-06-14";

type Cell = ExcelJS.CellValue;
const values = (row: ExcelJS.Row): Cell[] => (row.values as Cell[]).slice(1);

/** Rows of a sheet as arrays, and the index of the row whose first cell is `first`. */
function table(sheet: ExcelJS.Worksheet, first: string) {
  const rows: Cell[][] = [];
  sheet.eachRow({ includeEmpty: false }, (row) => rows.push(values(row)));
  const header = rows.findIndex((r) => r[0] === first);
  return { rows, header };
}

async function workbookOf(scenarioId: string) {
  const job = await api.exportFile({
    type: "scenario_daily_metrics",
    scenario_id: scenarioId,
    from: FROM,
    to: TO,
  });
  expect(job.status).toBe("completed");
  const res = await fetch(String(job.download_url));
  expect(res.headers.get("content-type")).toContain("spreadsheetml");
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(Buffer.from(await res.arrayBuffer()) as unknown as ExcelJS.Buffer);
  return workbook;
}

const ratio = (num: number, den: number) => (den === 0 ? 0 : num / den);

describe("scenario XLSX", () => {
  it("has the summary first, one daily sheet per node, and summary = sum of the daily sheet", async () => {
    let zeroSendNodes = 0;
    let branchedNodes = 0;
    let nestedNodes = 0;
    for (const scenarioId of sandbox.scenario_ids) {
      const workbook = await workbookOf(scenarioId);
      const [summarySheet, ...daily] = workbook.worksheets;
      const summary = table(summarySheet as ExcelJS.Worksheet, "#");
      // No title on the summary sheet (spec 2.5 has one only on the daily sheets): header first.
      expect(summary.header).toBe(0);
      expect(summary.rows[summary.header]).toEqual([
        ...SCENARIO_SUMMARY_LEAD_COLUMNS,
        ...SCENARIO_METRIC_COLUMNS,
      ]);
      const nodes = summary.rows.slice(summary.header + 1);
      const scenario = sandbox.world.scenario(scenarioId);
      expect(nodes.map((n) => n[3])).toEqual(scenario?.nodes.map((n) => n.node_id));
      expect(daily).toHaveLength(nodes.length);

      nodes.forEach((node, i) => {
        const [number, channel, branch, nodeId] = node;
        expect(number).toBe(i + 1);
        expect(SCENARIO_CHANNELS as readonly unknown[]).toContain(channel);
        const sheet = daily[i] as ExcelJS.Worksheet;
        const expectedName = `#${number} ${channel}${branch ? ` ${branch}` : ""}`;
        expect(sheet.name).toBe(expectedName);
        expect(sheet.name.length).toBeLessThanOrEqual(31);
        expect(sheet.name).not.toMatch(/[[\]:*?/\\]/);
        if (branch) branchedNodes += 1;
        if (String(branch).includes("·")) nestedNodes += 1;

        const days = table(sheet, "날짜");
        expect(days.rows[days.header]).toEqual(["날짜", ...SCENARIO_METRIC_COLUMNS]);
        // The node ID sits under the title, above the header.
        expect(days.rows.slice(0, days.header).some((r) => r.includes(nodeId as Cell))).toBe(true);
        const dayRows = days.rows.slice(days.header + 1);
        for (const day of dayRows) {
          expect(String(day[0]) >= FROM && String(day[0]) <= TO).toBe(true);
          expect(day[1] as number).toBeGreaterThan(0);
        }
        const dates = dayRows.map((d) => String(d[0]));
        expect([...dates].sort()).toEqual(dates);
        const col = (name: string) => SCENARIO_METRIC_COLUMNS.indexOf(name as never);
        const total = (name: string) => dayRows.reduce((s, d) => s + Number(d[1 + col(name)]), 0);
        const sum = (name: string) => Number(node[4 + col(name)]);
        for (const name of [
          "발송 수(건)",
          "오픈 수(건)",
          "전환 수(건)",
          "전환 수익",
          "집행 비용",
        ]) {
          expect(sum(name)).toBeCloseTo(total(name), 6);
        }
        // Ratios recomputed from the sums; 0 for a 0 denominator.
        expect(sum("오픈율(건)")).toBeCloseTo(ratio(sum("오픈 수(건)"), sum("발송 수(건)")), 9);
        expect(sum("오픈율(명)")).toBeCloseTo(ratio(sum("오픈 수(명)"), sum("발송 수(명)")), 9);
        expect(sum("전환율(건)")).toBeCloseTo(ratio(sum("전환 수(건)"), sum("오픈 수(건)")), 9);
        expect(sum("ROAS")).toBeCloseTo(ratio(sum("전환 수익"), sum("집행 비용")), 9);
        expect(sum("객단가")).toBeCloseTo(ratio(sum("전환 수익"), sum("전환 수(건)")), 9);
        expect(sum("CAC")).toBeCloseTo(ratio(sum("집행 비용"), sum("전환 수(건)")), 9);
        if (sum("발송 수(건)") === 0) {
          zeroSendNodes += 1;
          expect(dayRows).toHaveLength(0);
          expect(sum("오픈율(건)")).toBe(0);
        }
      });
    }
    expect(zeroSendNodes).toBeGreaterThan(0);
    expect(branchedNodes).toBeGreaterThan(0);
    expect(nestedNodes).toBeGreaterThan(0);
  });
});
