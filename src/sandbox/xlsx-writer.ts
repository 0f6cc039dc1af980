import { METRIC_COLUMNS, SUMMARY_LEAD_COLUMNS } from "./spec.js";
import type { ScenarioNode, ScenarioNodeReport } from "./world/types.js";
import { type WritableSheet, writeXlsx } from "./xlsx-file.js";

/**
 * Writes the scenario XLSX of spec 2.5 (see xlsx-file.ts; a scenario export is a few sheets of
 * one row per day, built in memory).
 *
 * Layout (spec 2.5 mentions a title only on the daily sheets, "the node ID under the title";
 * readers should still find header rows by their content):
 * - summary sheet `요약`, first: row 1 the header (`#`, `채널`, `A/B 테스트 분기`,
 *   `메시지 노드 ID` and the 15 metric columns), then one row per message node in flow order;
 * - one daily sheet per node named `#N 채널[ 분기]`: row 1 a title, row 2 the node ID alone in
 *   column A, row 3 the header (`날짜` and the metric columns), then one row per day with sends.
 */

export const SUMMARY_SHEET_NAME = "요약";
const MAX_SHEET_NAME = 31;
const FORBIDDEN_IN_SHEET_NAME = /[[\]:*?/\\]/g;

/** `#1 알림톡`, `#3 친구톡 B·A`: spec 2.5, cut to Excel's 31 characters without `[]:*?/\`. */
export function dailySheetName(node: ScenarioNode): string {
  const raw = `#${node.number} ${node.channel}${node.branch === "" ? "" : ` ${node.branch}`}`;
  return Array.from(raw.replace(FORBIDDEN_IN_SHEET_NAME, " ").trim())
    .slice(0, MAX_SHEET_NAME)
    .join("");
}

export interface ScenarioXlsxMeta {
  fromDate: string;
  toDate: string;
}

export async function writeScenarioXlsx(
  reports: readonly ScenarioNodeReport[],
  path: string,
  meta: ScenarioXlsxMeta,
): Promise<void> {
  const period = `${meta.fromDate} ~ ${meta.toDate}`;
  const sheets: WritableSheet[] = [
    {
      name: SUMMARY_SHEET_NAME,
      rows: [
        [...SUMMARY_LEAD_COLUMNS, ...METRIC_COLUMNS],
        ...reports.map(({ node, summary: totals }) => [
          node.number,
          node.channel,
          node.branch,
          node.node_id,
          ...METRIC_COLUMNS.map((column) => totals[column]),
        ]),
      ],
    },
  ];
  const used = new Set<string>([SUMMARY_SHEET_NAME]);
  for (const { node, days } of reports) {
    const name = uniqueName(dailySheetName(node), used);
    sheets.push({
      name,
      rows: [
        [`${name} 일별 성과 (${period})`],
        [node.node_id],
        ["날짜", ...METRIC_COLUMNS],
        ...days.map((day) => [day.date, ...METRIC_COLUMNS.map((c) => day.metrics[c])]),
      ],
    });
  }
  await writeXlsx(path, sheets);
}

/** Flow numbers make names unique; this only guards against two nodes cut to the same 31 chars. */
function uniqueName(name: string, used: Set<string>): string {
  let candidate = name;
  for (let n = 2; used.has(candidate); n += 1) {
    const suffix = `(${n})`;
    candidate = `${Array.from(name)
      .slice(0, MAX_SHEET_NAME - suffix.length)
      .join("")}${suffix}`;
  }
  used.add(candidate);
  return candidate;
}
