import { channelCodeOf } from "../../api/channels.js";
import { formatCount, percent } from "../../format.js";
import { safeText } from "../safe-text.js";
import type { ScenarioNode, ScenarioSummary } from "../schemas.js";
import { round6 } from "../stats.js";
import { branchReadout } from "./branches.js";
import { ADDITIVE, CONV, OPEN, RATIO_COLUMNS, SEND, withRatios } from "./columns.js";
import type { DailySheet } from "./sheets.js";
import { readScenarioWorkbook } from "./workbook.js";

/**
 * Scenario XLSX summary (spec 2.5). The zip is checked by zip-guard first; the workbook's cell
 * values are then read whole from the checked parts (xlsx-cells.ts), which the guard's caps keep
 * small (a scenario export is a few sheets of at most one row per day). The workbook is read in
 * workbook.ts and sheets.ts, branches compared in
 * branches.ts.
 */

function trendOf(rows: DailySheet["rows"]): ScenarioNode["trend"] {
  if (rows.length === 0) return null;
  const total = (k: string) => rows.reduce((a, r) => a + (r.values[k] ?? 0), 0);
  const metric = total(SEND) > 0 || total(OPEN) === 0 ? SEND : OPEN;
  let best = rows[0] as DailySheet["rows"][number];
  let worst = best;
  for (const r of rows) {
    if ((r.values[metric] ?? 0) > (best.values[metric] ?? 0)) best = r;
    if ((r.values[metric] ?? 0) < (worst.values[metric] ?? 0)) worst = r;
  }
  const half = Math.floor(rows.length / 2);
  const avg = (part: DailySheet["rows"]) =>
    part.length === 0 ? 0 : part.reduce((a, r) => a + (r.values[metric] ?? 0), 0) / part.length;
  const first = avg(rows.slice(0, half));
  const second = avg(rows.slice(rows.length - half));
  let direction: "up" | "down" | "flat" = "flat";
  if (half > 0 && second > first * 1.05 && second - first > 0) direction = "up";
  else if (half > 0 && second < first * 0.95) direction = "down";
  return {
    metric,
    best_day: { date: best.date, value: best.values[metric] ?? 0 },
    worst_day: { date: worst.date, value: worst.values[metric] ?? 0 },
    first_half_average: round6(first),
    second_half_average: round6(second),
    direction,
  };
}

/** Daily series kept for charts: enough to see a trend, small enough for a tool result. */
const DAILY_MAX_NODES = 8;
const DAILY_MAX_DAYS = 62;

/** Sends, opens and conversions per day of the nodes with the most sends, on one date axis. */
function dailySeries(
  nodes: ScenarioNode[],
  sheetOf: (DailySheet | undefined)[],
): ScenarioSummary["daily"] {
  const withSheets = nodes
    .map((node, k) => ({ node, sheet: sheetOf[k] }))
    .filter((e): e is { node: ScenarioNode; sheet: DailySheet } => e.sheet !== undefined);
  const kept = [...withSheets]
    .sort((a, b) => (b.node.totals[SEND] ?? 0) - (a.node.totals[SEND] ?? 0))
    .slice(0, DAILY_MAX_NODES)
    .sort((a, b) => a.node.number - b.node.number);
  const allDates = [...new Set(kept.flatMap((e) => e.sheet.rows.map((r) => r.date)))].sort();
  const dates = allDates.slice(-DAILY_MAX_DAYS);
  const column = (sheet: DailySheet, metric: string) => {
    const byDate = new Map(sheet.rows.map((r) => [r.date, r.values[metric] ?? 0]));
    return dates.map((d) => byDate.get(d) ?? null);
  };
  return {
    dates,
    series: kept.map(({ node, sheet }) => ({
      number: node.number,
      node_id: node.node_id,
      sends: column(sheet, SEND),
      opens: column(sheet, OPEN),
      conversions: column(sheet, CONV),
    })),
    nodes_not_shown: withSheets.length - kept.length,
    days_not_shown: allDates.length - dates.length,
  };
}

export async function summarizeScenarioXlsx(
  path: string,
  bytes: number,
  signal?: AbortSignal,
): Promise<ScenarioSummary> {
  const {
    metricColumns,
    rows: summaryRows,
    sheetOf,
    warnings,
  } = await readScenarioWorkbook(path, bytes, signal);

  const nodes: ScenarioNode[] = [];
  for (const [k, { number, nodeId, channel, branch, totals }] of summaryRows.entries()) {
    const sheet = sheetOf[k];
    const mismatches: ScenarioNode["mismatches"] = [];
    if (sheet) {
      for (const metric of metricColumns) {
        if (!ADDITIVE.has(metric)) continue;
        const sum = sheet.rows.reduce((a, d) => a + (d.values[metric] ?? 0), 0);
        const expected = totals[metric] ?? 0;
        if (Math.abs(sum - expected) > 1e-6 * Math.max(1, Math.abs(expected))) {
          mismatches.push({ metric, summary: expected, daily_sum: round6(sum) });
        }
      }
    } else {
      warnings.push(`Node #${number} has no daily sheet.`);
    }
    nodes.push({
      number,
      channel,
      channel_code: channelCodeOf(channel),
      branch,
      node_id: nodeId,
      totals,
      days: sheet ? sheet.rows.length : 0,
      sheet: sheet ? safeText(sheet.name, 60) : null,
      trend: sheet ? trendOf(sheet.rows) : null,
      mismatches,
    });
  }

  const summed: Record<string, number> = {};
  for (const metric of metricColumns) {
    if (RATIO_COLUMNS.has(metric)) continue;
    summed[metric] = round6(nodes.reduce((a, n) => a + (n.totals[metric] ?? 0), 0));
  }
  const totals = withRatios(summed);
  const branches = branchReadout(nodes);
  const dailyTrend = dailySeries(nodes, sheetOf);
  const result: ScenarioSummary = {
    kind: "scenario_daily_metrics",
    summary: "",
    nodes,
    file: { path, bytes },
    metric_columns: metricColumns,
    totals,
    branches,
    warnings,
    daily: dailyTrend,
  };
  const mismatched = nodes.filter((n) => n.mismatches.length > 0).length;
  result.summary = [
    `${nodes.length} message node(s)`,
    `${formatCount(totals[SEND] ?? 0)} sends, open rate ${percent(totals["오픈율(건)"] ?? 0)}, ${formatCount(totals[CONV] ?? 0)} conversions (${percent(totals["전환율(건)"] ?? 0)} of opens)`,
    mismatched === 0
      ? "summary rows match the daily sheets"
      : `${mismatched} node(s) differ from their daily sheets`,
    ...(branches[0] ? [branches[0].verdict] : []),
  ].join("; ");
  return result;
}
