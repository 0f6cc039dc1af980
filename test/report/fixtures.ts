import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { campaignRows, eventRow, HEADER, mulberry32, toCsv } from "../analysis/campaign/fixture.js";
import { buildXlsx, METRICS, withRatios } from "../analysis/scenario/xlsx-fixture.js";

/**
 * Known export files for the report tests: the campaign fixture of the analysis tests (A/B groups,
 * a control group, a plain round) and a small scenario workbook with an A/B branch, with Korean
 * names throughout.
 */

export async function writeCampaignCsv(dir: string): Promise<string> {
  const file = join(dir, "campaign-캠페인.csv");
  await writeFile(file, toCsv(campaignRows(7, 80)));
  return file;
}

/**
 * The same campaign file with task IDs shaped like the service's (`tsk_` and 20 hex digits): a
 * round's label then runs past an axis' room, and the group at its end is what tells bars apart.
 */
export const LONG_TASK_IDS = {
  "task-1": "tsk_7814637a2c9e41d0b5a3",
  "task-2": "tsk_7814637a2c9e41d0b5f8",
};

export async function writeCampaignCsvWithLongTaskIds(dir: string): Promise<string> {
  const file = join(dir, "campaign-long-ids.csv");
  const rows = campaignRows(7, 80).map((row, i) =>
    i === 0
      ? row
      : [LONG_TASK_IDS[row[0] as keyof typeof LONG_TASK_IDS] ?? row[0] ?? "", ...row.slice(1)],
  );
  await writeFile(file, toCsv(rows));
  return file;
}

/** Send rounds and error codes of writeManyRoundsCsv: more than a chart draws of either. */
export const MANY_SENDS = 20;
export const MANY_CODES = 17;

/**
 * An A/B campaign of MANY_SENDS send rounds (two groups each, one user a group) and MANY_CODES
 * error codes: more round-and-group rows and codes than the report charts, so its notes say
 * what is not drawn.
 */
export async function writeManyRoundsCsv(dir: string): Promise<string> {
  const rows = [HEADER];
  for (let i = 0; i < MANY_SENDS; i++) {
    const scheduled = `2025-03-${String(i + 1).padStart(2, "0")} 10:00:00`;
    for (const group of ["그룹A", "그룹B"]) {
      const round = { task: "task-1", scheduled, group, userId: `u-${group}`, at: scheduled };
      rows.push(eventRow({ ...round, event: "message_sent" }));
      rows.push(eventRow({ ...round, event: "message_received" }));
    }
  }
  for (let c = 0; c < MANY_CODES; c++) {
    const at = "2025-03-01 10:00:00";
    const round = { task: "task-1", scheduled: at, group: "그룹A", userId: `f-${c}`, at };
    rows.push(eventRow({ ...round, event: "message_sent" }));
    rows.push(eventRow({ ...round, event: "message_failed", errorCode: `E${c}` }));
  }
  const file = join(dir, "many-rounds.csv");
  await writeFile(file, toCsv(rows));
  return file;
}

export const SCENARIO_NODES = [
  { channel: "앱푸시", branch: "" },
  { channel: "알림톡", branch: "A" },
  { channel: "알림톡", branch: "B" },
  { channel: "친구톡", branch: "B·A" },
] as const;
export const SCENARIO_DAYS = 10;

export async function writeScenarioXlsx(dir: string): Promise<string> {
  const rnd = mulberry32(23);
  const dates = Array.from(
    { length: SCENARIO_DAYS },
    (_, d) => `2025-03-${String(d + 1).padStart(2, "0")}`,
  );
  const nodes = SCENARIO_NODES.map((spec, i) => {
    const days = dates.map((_, d) => {
      const sends = Math.floor(200 + rnd() * 80 + d * 10 * (i + 1));
      const opens = Math.floor(sends * (0.15 + 0.05 * i + rnd() * 0.1));
      const conv = Math.floor(opens * (0.05 + rnd() * 0.1));
      return {
        "발송 수(건)": sends,
        "발송 수(명)": sends - 3,
        "오픈 수(건)": opens,
        "오픈 수(명)": Math.floor(opens * 0.9),
        "전환 수(건)": conv,
        "전환 수(명)": conv,
        "전환 수익": conv * 12_000,
        "집행 비용": sends * 9,
      };
    });
    return { number: i + 1, ...spec, nodeId: `node_${i + 1}_가입환영`, days };
  });
  const summary: (string | number | null)[][] = [
    ["시나리오 일별 성과"],
    ["기간", `${dates[0]} ~ ${dates.at(-1)}`],
    [],
    ["#", "채널", "A/B 테스트 분기", "메시지 노드 ID", ...METRICS],
  ];
  const sheets = [{ name: "요약", rows: summary }];
  for (const n of nodes) {
    const sums: Record<string, number> = {};
    for (const d of n.days) for (const [k, v] of Object.entries(d)) sums[k] = (sums[k] ?? 0) + v;
    const t = withRatios(sums);
    summary.push([
      n.number,
      n.channel,
      n.branch || null,
      n.nodeId,
      ...METRICS.map((m) => t[m] ?? 0),
    ]);
    const title = `#${n.number} ${n.channel}${n.branch ? ` ${n.branch}` : ""}`;
    const rows: (string | number | null)[][] = [[title], [n.nodeId], ["날짜", ...METRICS]];
    n.days.forEach((d, k) => {
      const r = withRatios(d);
      rows.push([dates[k] as string, ...METRICS.map((m) => r[m] ?? 0)]);
    });
    sheets.push({ name: title, rows });
  }
  const file = join(dir, "scenario-시나리오.xlsx");
  await writeFile(file, await buildXlsx(sheets));
  return file;
}
