import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { HistoryError } from "../../src/history/errors.js";
import { queryHistory } from "../../src/history/query.js";
import { buildXlsx, METRICS } from "../analysis/scenario/xlsx-fixture.js";
import { type HistoryFixture, historyFixture } from "./fixtures.js";

/**
 * Scenario XLSX exports in the history's daily-metrics table: a node's day is kept from the
 * newest export that holds it, and the kept days apply by date.
 */

interface Node {
  number: number;
  channel: string;
  nodeId: string;
  /** Date and sends (건); the other metrics are derived from it. */
  days: [string, number][];
}

async function workbook(path: string, nodes: Node[]): Promise<string> {
  const summary: (string | number | null)[][] = [
    ["#", "채널", "A/B 테스트 분기", "메시지 노드 ID", ...METRICS],
    ...nodes.map((n) => [n.number, n.channel, null, n.nodeId, ...METRICS.map(() => 0)]),
  ];
  const sheets = [{ name: "요약", rows: summary }];
  for (const n of nodes) {
    sheets.push({
      name: `#${n.number} ${n.channel}`,
      rows: [
        [`#${n.number} ${n.channel}`],
        [n.nodeId],
        ["날짜", ...METRICS],
        ...n.days.map(([date, sends]) => [
          date,
          ...METRICS.map((m, i) => (i === 0 ? sends : m === "ROAS" ? 1.5 : 0)),
        ]),
      ],
    });
  }
  await writeFile(path, await buildXlsx(sheets));
  return path;
}

const LIMITS = { memoryMb: 256, threads: 1, timeoutSeconds: 60 };
let f: HistoryFixture;
beforeEach(async () => {
  f = await historyFixture({ keepDays: 60 });
});
afterEach(async () => {
  await f.close();
});

function days() {
  return queryHistory(f.history, {
    sql: "SELECT scenario_id, job_id, node_id, strftime(date, '%Y-%m-%d'), sends, roas FROM history_scenario_days ORDER BY node_id, date",
    maxRows: 100,
    limits: LIMITS,
    spillParent: f.dir,
  });
}

describe("scenario exports", () => {
  it("keeps each node's day from the newest export that holds it", async () => {
    const early = await workbook(join(f.dir, "a.xlsx"), [
      {
        number: 1,
        channel: "앱푸시",
        nodeId: "n1",
        days: [
          ["2026-10-01", 10],
          ["2026-10-02", 11],
          ["2026-10-03", 12],
        ],
      },
      { number: 2, channel: "알림톡", nodeId: "n2", days: [["2026-10-02", 5]] },
    ]);
    const late = await workbook(join(f.dir, "b.xlsx"), [
      {
        number: 1,
        channel: "앱푸시",
        nodeId: "n1",
        days: [
          ["2026-10-03", 20],
          ["2026-10-04", 21],
        ],
      },
    ]);
    const common = { scenarioId: "sc-1", window: {} };
    // The later export is added first; the earlier one still loses the day both hold.
    expect(
      await f.history.ingestScenarioExport({
        ...common,
        path: late,
        jobId: "job-b",
        jobCreatedAt: "2026-11-02T00:00:00Z",
      }),
    ).toMatchObject({ status: "added", rows: 2, scenario_rows: 2 });
    expect(
      await f.history.ingestScenarioExport({
        ...common,
        path: early,
        jobId: "job-a",
        jobCreatedAt: "2026-11-01T00:00:00Z",
      }),
    ).toMatchObject({ status: "added", rows: 4, scenario_rows: 5 });
    expect((await days()).rows).toEqual([
      ["sc-1", "job-a", "n1", "2026-10-01", 10, 1.5],
      ["sc-1", "job-a", "n1", "2026-10-02", 11, 1.5],
      ["sc-1", "job-b", "n1", "2026-10-03", 20, 1.5],
      ["sc-1", "job-b", "n1", "2026-10-04", 21, 1.5],
      ["sc-1", "job-a", "n2", "2026-10-02", 5, 1.5],
    ]);
    expect(
      (
        await f.history.ingestScenarioExport({
          ...common,
          path: early,
          jobId: "job-a",
          jobCreatedAt: "2026-11-01T00:00:00Z",
        })
      ).status,
    ).toBe("already_added");
  });

  it("leaves out days before the kept days (60 back from 2026-11-20: 2026-09-21)", async () => {
    const path = await workbook(join(f.dir, "a.xlsx"), [
      {
        number: 1,
        channel: "앱푸시",
        nodeId: "n1",
        days: [
          ["2026-09-20", 1],
          ["2026-09-21", 2],
        ],
      },
    ]);
    await f.history.ingestScenarioExport({
      path,
      jobId: "job-a",
      scenarioId: "sc-1",
      window: {},
      jobCreatedAt: "2026-11-01T00:00:00Z",
    });
    expect((await days()).rows.map((r) => r[3])).toEqual(["2026-09-21"]);
  });

  it("refuses a workbook that is not a scenario export, adding nothing", async () => {
    const path = join(f.dir, "other.xlsx");
    await writeFile(path, await buildXlsx([{ name: "Sheet1", rows: [["a", "b"]] }]));
    const error = await f.history
      .ingestScenarioExport({
        path,
        jobId: "x",
        scenarioId: "sc",
        window: {},
        jobCreatedAt: "2026-11-01T00:00:00Z",
      })
      .catch((e: unknown) => e);
    expect((error as HistoryError).code).toBe("not_scenario_export");
    expect((error as HistoryError).message).toMatch(
      /cannot be added to the history: Not a scenario export/,
    );
    expect((await f.history.catalogue()).generation).toBe(0);
  });
});
