import type { ScenarioSummary } from "../analysis/schemas.js";
import { formatCount, formatNumber, percent, truncate } from "../format.js";
import type { Chart, Kpi, ReportModel, Section, ValueFormat } from "./model.js";
import { fileName, formatP } from "./value-text.js";

/** The report of a scenario XLSX summary: daily trend per node, branch readout, node totals. */

/** Most categories one chart shows; a note says what is left out. */
export const MAX_BRANCH_CHARTS = 6;

const SEND = "발송 수(건)";
const OPEN = "오픈 수(건)";
const CONV = "전환 수(건)";

export function scenarioReport(s: ScenarioSummary): ReportModel {
  const t = s.totals;
  const kpis: Kpi[] = [
    { label: "Message nodes", value: formatCount(s.nodes.length) },
    { label: "Sends", value: formatCount(t[SEND] ?? 0) },
    { label: "Open rate (건)", value: percent(t["오픈율(건)"] ?? null) },
    { label: "Conversions", value: formatCount(t[CONV] ?? 0) },
    { label: "Conversion rate (건)", value: percent(t["전환율(건)"] ?? null), note: "of opens" },
  ];
  if (t["전환 수익"] !== undefined)
    kpis.push({ label: "Revenue", value: formatNumber(t["전환 수익"]) });
  return {
    kind: "scenario_daily_metrics",
    title: `Scenario export: ${fileName(s.file.path)}`,
    subtitle: s.summary,
    kpis,
    sections: [dailySection(s), branchSection(s), nodeSection(s)].filter(
      (x) => x.charts.length > 0 || x.tables.length > 0 || x.text.length > 0,
    ),
    notes: s.warnings,
  };
}

function dailySection(s: ScenarioSummary): Section {
  const section: Section = {
    id: "daily",
    title: "Daily trend per node",
    text: [],
    charts: [],
    tables: [],
  };
  const daily = s.daily;
  if (!daily || daily.dates.length === 0 || daily.series.length === 0) {
    section.text.push("No daily sheets to draw.");
    return section;
  }
  const name = (x: { number: number; node_id: string }) =>
    `#${x.number} ${truncate(x.node_id, 18)}`;
  const notes = [
    daily.nodes_not_shown > 0
      ? `${formatCount(daily.nodes_not_shown)} node(s) with fewer sends not drawn`
      : "",
    daily.days_not_shown > 0 ? `${formatCount(daily.days_not_shown)} earlier day(s) not drawn` : "",
  ].filter((n) => n !== "");
  const note = notes.length > 0 ? `${notes.join("; ")}.` : undefined;
  const make = (
    id: string,
    title: string,
    format: ValueFormat,
    pick: (x: (typeof daily.series)[number]) => Array<number | null>,
  ): Chart => ({
    id,
    title,
    type: "line",
    categoryLabel: "Date",
    categories: daily.dates,
    series: daily.series.map((x) => ({ name: name(x), values: pick(x) })),
    format,
    ...(note === undefined ? {} : { note }),
  });
  section.charts.push(
    make("daily-sends", "Sends per day (발송 수)", "count", (x) => x.sends),
    make("daily-open-rate", "Open rate per day (오픈 수 / 발송 수)", "percent", (x) =>
      x.sends.map((v, i) => {
        const o = x.opens[i];
        return v === null || v === 0 || o === null || o === undefined ? null : o / v;
      }),
    ),
    make("daily-conversions", "Conversions per day (전환 수)", "count", (x) => x.conversions),
  );
  return section;
}

function branchSection(s: ScenarioSummary): Section {
  const section: Section = {
    id: "branches",
    title: "Branches: A against B",
    text: [],
    charts: [],
    tables: [],
  };
  if (s.branches.length === 0) {
    section.text.push("The scenario has no A/B branch.");
    return section;
  }
  for (const [k, b] of s.branches.slice(0, MAX_BRANCH_CHARTS).entries()) {
    section.charts.push({
      id: `branch-${k}`,
      title: `Open rate by arm${b.parent === "" ? "" : ` under ${b.parent}`}`,
      type: "bar",
      categoryLabel: "Arm",
      categories: b.arms.map((a) => a.branch),
      series: [
        { name: "Open rate (명)", values: b.arms.map((a) => a.open_rate_users) },
        { name: "Conversion rate (건)", values: b.arms.map((a) => a.conversion_rate) },
      ],
      format: "percent",
      note: b.verdict,
    });
  }
  if (s.branches.length > MAX_BRANCH_CHARTS) {
    section.text.push(
      // The table below lists every branch point, in a file and in the view alike.
      `Not drawn as charts: ${formatCount(s.branches.length - MAX_BRANCH_CHARTS)} more branch point(s); the table below has them all.`,
    );
  }
  section.tables.push({
    caption: "Arms compared (two-proportion z-test on open rate by users)",
    columns: [
      "Branch point",
      "Arm",
      "Sends",
      "Open rate (명)",
      "Conversion rate (건)",
      "p-value",
      "Verdict",
    ],
    rows: s.branches.flatMap((b) =>
      b.arms.map((a, i) => [
        b.parent === "" ? "(top)" : b.parent,
        a.branch,
        formatCount(a.sends),
        percent(a.open_rate_users),
        percent(a.conversion_rate),
        i === 0 ? formatP(b.p_value) : "",
        i === 0 ? b.verdict : "",
      ]),
    ),
    numeric: [false, false, true, true, true, true, false],
  });
  return section;
}

function nodeSection(s: ScenarioSummary): Section {
  return {
    id: "nodes",
    title: "Message nodes",
    text: [],
    charts: [],
    tables: [
      {
        caption: "Every node of the summary sheet, in file order",
        columns: [
          "#",
          "Channel",
          "Branch",
          "Node",
          "Sends",
          "Open rate (건)",
          "Conversions",
          "Days",
          "Check",
        ],
        rows: s.nodes.map((n) => [
          String(n.number),
          n.channel,
          n.branch,
          n.node_id,
          formatCount(n.totals[SEND] ?? 0),
          percent(
            n.totals["오픈율(건)"] ?? (n.totals[OPEN] ?? 0) / Math.max(1, n.totals[SEND] ?? 0),
          ),
          formatCount(n.totals[CONV] ?? 0),
          formatCount(n.days),
          n.mismatches.length === 0 ? "ok" : `${n.mismatches.length} differ`,
        ]),
        numeric: [true, false, false, false, true, true, true, true, false],
      },
    ],
  };
}
