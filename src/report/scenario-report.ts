import type { ScenarioSummary } from "../analysis/schemas.js";
import { truncate } from "../format.js";
import { counted, type ReportText } from "./i18n/index.js";
import type { Chart, Kpi, ReportModel, Section, ValueFormat } from "./model.js";
import { fileName, pCell, pText, verdictLabel } from "./value-text.js";

/** The report of a scenario XLSX summary: daily trend per node, branch readout, node totals. */

/** Most categories one chart shows; a note says what is left out. */
export const MAX_BRANCH_CHARTS = 6;

/** The workbook's own column headers (its metrics are named in Korean in every language). */
const SEND = "발송 수(건)";
const OPEN = "오픈 수(건)";
const CONV = "전환 수(건)";
const OPEN_RATE = "오픈율(건)";
const CONV_RATE = "전환율(건)";
const REVENUE = "전환 수익";

type Branch = ScenarioSummary["branches"][number];

export function scenarioReport(s: ScenarioSummary, t: ReportText): ReportModel {
  const { m, f } = t;
  const c = m.scenario;
  const total = s.totals;
  const pct = (v: number | null | undefined) => f.value(v, "percent", m.page.missing);
  const kpis: Kpi[] = [
    { label: c.nodes, value: f.value(s.nodes.length, "count") },
    { label: c.sends, value: f.value(total[SEND] ?? 0, "count") },
    { label: c.openRate, value: pct(total[OPEN_RATE]) },
    { label: c.conversions, value: f.value(total[CONV] ?? 0, "count") },
    { label: c.conversionRate, value: pct(total[CONV_RATE]), note: c.ofOpens },
  ];
  // The service's workbooks state revenue in won.
  const revenue = total[REVENUE];
  if (revenue !== undefined) kpis.push({ label: c.revenue, value: f.money({ KRW: revenue }) });
  // The days of the daily sheets: those charted, and the earlier ones left out of the charts.
  const dates = s.daily?.dates ?? [];
  const earlier = s.daily?.days_not_shown ?? 0;
  const first = dates[0];
  const last = dates.at(-1);
  return {
    kind: "scenario_daily_metrics",
    title: c.title(fileName(s.file.path)),
    subtitle: c.subtitle(
      counted(t, s.nodes.length),
      counted(t, dates.length + earlier),
      first === undefined || last === undefined || earlier > 0
        ? undefined
        : c.span(f.localTime(first), f.localTime(last)),
    ),
    kpis,
    sections: [dailySection(s, t), branchSection(s, t), nodeSection(s, t)].filter(
      (x) => x.charts.length > 0 || x.tables.length > 0 || x.text.length > 0,
    ),
    notes: [...(s.warnings ?? [])],
  };
}

function dailySection(s: ScenarioSummary, t: ReportText): Section {
  const c = t.m.scenario;
  const section: Section = { id: "daily", title: c.daily, text: [], charts: [], tables: [] };
  const daily = s.daily;
  if (!daily || daily.dates.length === 0 || daily.series.length === 0) {
    section.text.push(c.noDaily);
    return section;
  }
  const name = (x: { number: number; node_id: string }) =>
    `#${x.number} ${truncate(x.node_id, 18)}`;
  const notes = [
    daily.nodes_not_shown > 0 ? c.fewerNodes(counted(t, daily.nodes_not_shown)) : "",
    daily.days_not_shown > 0 ? c.earlierDays(counted(t, daily.days_not_shown)) : "",
  ].filter((n) => n !== "");
  const note = notes.length > 0 ? c.dailyNote(notes) : undefined;
  const make = (
    id: string,
    title: string,
    format: ValueFormat,
    pick: (x: (typeof daily.series)[number]) => Array<number | null>,
  ): Chart => ({
    id,
    title,
    type: "line",
    categoryLabel: c.date,
    categories: daily.dates,
    series: daily.series.map((x) => ({ name: name(x), values: pick(x) })),
    format,
    ...(note === undefined ? {} : { note }),
  });
  section.charts.push(
    make("daily-sends", c.sendsPerDay, "count", (x) => x.sends),
    make("daily-open-rate", c.openRatePerDay, "percent", (x) =>
      x.sends.map((v, i) => {
        const o = x.opens[i];
        return v === null || v === 0 || o === null || o === undefined ? null : o / v;
      }),
    ),
    make("daily-conversions", c.conversionsPerDay, "count", (x) => x.conversions),
  );
  return section;
}

/** A branch point's outcome: the leading arm and its test, a tie, or no sends yet. */
function branchVerdict(b: Branch, t: ReportText): string {
  const c = t.m.scenario;
  const arms = b.arms.map((a) => a.branch);
  if (b.arms.every((a) => a.sends === 0)) return c.noSends(arms);
  if (b.leader === null) return c.tie(arms);
  return c.leads(b.leader, branchTest(b, t), pText(t, b.p_value));
}

/** The test of a branch point: none with more than two arms, none without data. */
function branchTest(b: Branch, t: ReportText): string {
  if (b.p_value === null && b.arms.length > 2) return t.m.readout.notTested;
  return verdictLabel(t, b.p_value, b.significant);
}

function branchSection(s: ScenarioSummary, t: ReportText): Section {
  const { m, f } = t;
  const c = m.scenario;
  const section: Section = { id: "branches", title: c.branches, text: [], charts: [], tables: [] };
  if (s.branches.length === 0) {
    section.text.push(c.noBranches);
    return section;
  }
  for (const [k, b] of s.branches.slice(0, MAX_BRANCH_CHARTS).entries()) {
    section.charts.push({
      id: `branch-${k}`,
      title: c.armRates(b.parent),
      type: "bar",
      categoryLabel: c.arm,
      categories: b.arms.map((a) => a.branch),
      series: [
        { name: c.openRateUsers, values: b.arms.map((a) => a.open_rate_users) },
        { name: c.conversionRateCases, values: b.arms.map((a) => a.conversion_rate) },
      ],
      format: "percent",
      note: branchVerdict(b, t),
    });
  }
  if (s.branches.length > MAX_BRANCH_CHARTS) {
    // The table below lists every branch point, in a file and in the view alike.
    section.text.push(c.moreBranches(counted(t, s.branches.length - MAX_BRANCH_CHARTS)));
  }
  const pct = (v: number) => f.value(v, "percent", m.page.missing);
  section.tables.push({
    caption: c.armsCompared,
    columns: [
      c.branchPoint,
      c.arm,
      c.sends,
      c.openRateUsers,
      c.conversionRateCases,
      m.stats.pValue,
      m.stats.verdict,
    ],
    rows: s.branches.flatMap((b) =>
      b.arms.map((a, i) => [
        b.parent === "" ? c.top : b.parent,
        a.branch,
        f.value(a.sends, "count"),
        pct(a.open_rate_users),
        pct(a.conversion_rate),
        i === 0 ? pCell(t, b.p_value) : "",
        i === 0 ? branchTest(b, t) : "",
      ]),
    ),
    numeric: [false, false, true, true, true, true, false],
  });
  return section;
}

function nodeSection(s: ScenarioSummary, t: ReportText): Section {
  const { m, f } = t;
  const c = m.scenario;
  return {
    id: "nodes",
    title: c.nodes,
    text: [],
    charts: [],
    tables: [
      {
        caption: c.everyNode,
        columns: [
          c.number,
          c.channel,
          c.branch,
          c.node,
          c.sends,
          c.openRate,
          c.conversions,
          c.days,
          c.check,
        ],
        rows: s.nodes.map((n) => [
          String(n.number),
          n.channel,
          n.branch,
          n.node_id,
          f.value(n.totals[SEND] ?? 0, "count"),
          f.value(
            n.totals[OPEN_RATE] ?? (n.totals[OPEN] ?? 0) / Math.max(1, n.totals[SEND] ?? 0),
            "percent",
          ),
          f.value(n.totals[CONV] ?? 0, "count"),
          f.value(n.days, "count"),
          n.mismatches.length === 0 ? c.checkOk : c.checkDiffers(counted(t, n.mismatches.length)),
        ]),
        numeric: [true, false, false, false, true, true, true, true, false],
      },
    ],
  };
}
