import type { CampaignSummary, ScenarioSummary } from "../analysis/schemas.js";
import { formatCount, formatNumber, money, percent, truncate } from "../format.js";

/**
 * What the report page draws, built from a tool's structuredContent: summarize_export (campaign
 * CSV or scenario XLSX) or campaign_metrics. Pure data and text, no DOM: the page bundles it, the
 * tests call it in Node. Every chart carries its own data, from which its table is made, so no
 * chart is without a table view.
 */

export type ValueFormat = "count" | "number" | "percent" | "seconds";

export interface Series {
  name: string;
  values: Array<number | null>;
}

export interface Chart {
  id: string;
  title: string;
  /** bar: vertical bars per category; hbar: horizontal; line: one line per series over the
   * categories; interval: series[0] an estimate with series[1] low and series[2] high. */
  type: "bar" | "hbar" | "line" | "interval";
  categoryLabel: string;
  categories: string[];
  series: Series[];
  format: ValueFormat;
  note?: string;
}

export interface Table {
  caption: string;
  columns: string[];
  rows: string[][];
  /** Right-aligned columns. */
  numeric: boolean[];
}

export interface Section {
  id: string;
  title: string;
  text: string[];
  charts: Chart[];
  tables: Table[];
}

export interface Kpi {
  label: string;
  value: string;
  note?: string;
}

export interface ReportModel {
  kind: "campaign_event_data" | "scenario_daily_metrics" | "campaign_metrics";
  title: string;
  subtitle: string;
  kpis: Kpi[];
  sections: Section[];
  notes: string[];
}

/** Data the page cannot draw: says what it got and what it expected. */
export class ReportDataError extends Error {
  override name = "ReportDataError";
}

/** Most categories one chart shows; tables show the same rows, and a note says what is left out. */
export const MAX_ROUNDS_CHARTED = 24;
export const MAX_FAILURE_CODES = 15;
export const MAX_CAMPAIGNS_CHARTED = 20;
export const MAX_TASKS_CHARTED = 60;
export const MAX_BRANCH_CHARTS = 6;
const Z95 = 1.959964;

export function buildReport(data: unknown): ReportModel {
  if (typeof data !== "object" || data === null) {
    throw new ReportDataError("No report data: expected the structuredContent of a tool result.");
  }
  const record = data as Record<string, unknown>;
  let model: ReportModel;
  if (record.kind === "campaign_event_data") model = campaignReport(data as CampaignSummary);
  else if (record.kind === "scenario_daily_metrics")
    model = scenarioReport(data as ScenarioSummary);
  else if (Array.isArray(record.campaigns) && typeof record.totals === "object") {
    model = metricsReport(data as CampaignMetricsData);
  } else {
    throw new ReportDataError(
      "Unknown report data: expected the result of summarize_export or campaign_metrics.",
    );
  }
  for (const chart of model.sections.flatMap((s) => s.charts)) alignSeries(chart);
  const cut = budgetNote(record);
  if (cut !== undefined) model.notes.unshift(cut);
  return model;
}

/**
 * A result cut to the tool-result budget may hold shorter lists than its categories: every
 * series is made as long as its categories (missing values drawn as gaps), never longer.
 */
function alignSeries(chart: Chart): void {
  const n = chart.categories.length;
  for (const s of chart.series) {
    s.values = Array.from({ length: n }, (_, i) => {
      const v = s.values[i];
      return typeof v === "number" && Number.isFinite(v) ? v : null;
    });
  }
}

/** What the server's result budget left out (`truncated`, `more`), for the page's notes. */
function budgetNote(record: Record<string, unknown>): string | undefined {
  if (record.truncated !== true) return undefined;
  const more = record.more as
    | { omitted?: Array<{ field: string; shown: number; total: number }>; full_result?: string }
    | undefined;
  const lists = (more?.omitted ?? []).map((o) => `${o.field} ${o.shown} of ${o.total}`).join(", ");
  return `This result was cut to fit the tool-result budget${lists === "" ? "" : ` (${lists})`}, so some charts show part of the data${more?.full_result === undefined ? "" : `; the whole result is the resource ${more.full_result}`}.`;
}

/** The value as shown in text and tables ("12.3%", "1,234", "4.2 min"); null as "-". */
export function formatValue(value: number | null | undefined, format: ValueFormat): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return "-";
  switch (format) {
    case "count":
      return formatCount(Math.round(value));
    case "number":
      return formatNumber(value);
    case "percent":
      return percent(value);
    case "seconds":
      return formatSeconds(value);
  }
}

export function formatSeconds(seconds: number): string {
  if (seconds < 90) return `${formatNumber(Math.round(seconds))} s`;
  if (seconds < 5400) return `${(seconds / 60).toFixed(1)} min`;
  if (seconds < 172_800) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86_400).toFixed(1)} d`;
}

/** The table view of a chart: one row per category, one column per series. */
export function chartTable(chart: Chart): Table {
  if (chart.type === "interval") {
    const [estimate, low, high] = chart.series;
    return {
      caption: chart.title,
      columns: [chart.categoryLabel, estimate?.name ?? "", "95% CI low", "95% CI high"],
      rows: chart.categories.map((c, i) => [
        c,
        signed(estimate?.values[i] ?? null, chart.format),
        signed(low?.values[i] ?? null, chart.format),
        signed(high?.values[i] ?? null, chart.format),
      ]),
      numeric: [false, true, true, true],
    };
  }
  return {
    caption: chart.title,
    columns: [chart.categoryLabel, ...chart.series.map((s) => s.name)],
    rows: chart.categories.map((c, i) => [
      c,
      ...chart.series.map((s) => formatValue(s.values[i] ?? null, chart.format)),
    ]),
    numeric: [false, ...chart.series.map(() => true)],
  };
}

/** Marks a chart draws: one per value present (a bar, a point, an interval). */
export function markCount(chart: Chart): number {
  const drawn = chart.type === "interval" ? chart.series.slice(0, 1) : chart.series;
  return drawn.reduce((a, s) => a + s.values.filter((v) => v !== null).length, 0);
}

function signed(value: number | null, format: ValueFormat): string {
  if (value === null) return "-";
  const text = formatValue(Math.abs(value), format);
  return value < 0 ? `−${text}` : value > 0 ? `+${text}` : text;
}

function fileName(path: string): string {
  return path.split(/[\\/]/).pop() ?? path;
}

function leftOut(total: number, shown: number, what: string): string | undefined {
  return total > shown
    ? `${formatCount(total - shown)} more ${what} in structuredContent.`
    : undefined;
}

/** The 95% interval of p2 - p1 (Wald, unpooled): what the difference could plausibly be. */
export function differenceInterval(
  x1: number,
  n1: number,
  x2: number,
  n2: number,
): { difference: number; low: number; high: number } | null {
  if (n1 <= 0 || n2 <= 0) return null;
  const p1 = x1 / n1;
  const p2 = x2 / n2;
  const se = Math.sqrt((p1 * (1 - p1)) / n1 + (p2 * (1 - p2)) / n2);
  const d = p2 - p1;
  return { difference: d, low: d - Z95 * se, high: d + Z95 * se };
}

// ---------------------------------------------------------------------------------------------
// Campaign CSV

function roundLabel(r: { task_id: string; scheduled_at: string; group: string }): string {
  const when = r.scheduled_at.slice(5, 16);
  return `${truncate(r.task_id, 14)} ${when}${r.group === "" ? "" : ` ${r.group}`}`;
}

function campaignReport(s: CampaignSummary): ReportModel {
  const t = s.totals;
  const sendGroupRevenue = Object.fromEntries(
    (s.revenue?.send_group_by_currency ?? []).map((c) => [c.currency, c.amount]),
  );
  const kpis: Kpi[] = [
    { label: "Rows", value: formatCount(s.rows) },
    { label: "Sent", value: formatCount(t.sent) },
    {
      label: "Received",
      value: formatCount(t.received),
      note: `${percent(t.success_rate)} success`,
    },
    { label: "Opens", value: formatCount(t.opens), note: `${percent(t.open_rate)} of received` },
    {
      label: "Conversions (send groups)",
      value: formatCount(t.send_group_conversions ?? t.conversions),
      note: `${percent(t.conversion_rate)} of opens`,
    },
    { label: "Revenue (send groups)", value: money(sendGroupRevenue) },
  ];
  const sections: Section[] = [funnelSection(s), abSection(s), timingSection(s), failureSection(s)];
  return {
    kind: "campaign_event_data",
    title: `Campaign export: ${fileName(s.file.path)}`,
    subtitle: s.summary,
    kpis,
    sections: sections.filter(
      (x) => x.charts.length > 0 || x.tables.length > 0 || x.text.length > 0,
    ),
    notes: s.warnings,
  };
}

function funnelSection(s: CampaignSummary): Section {
  const rounds = s.rounds.slice(-MAX_ROUNDS_CHARTED);
  const chart: Chart = {
    id: "funnel",
    title: "Delivery funnel per round and group",
    type: "bar",
    categoryLabel: "Round (task, scheduled, group)",
    categories: rounds.map(roundLabel),
    series: [
      { name: "Sent", values: rounds.map((r) => r.sent) },
      { name: "Received", values: rounds.map((r) => r.received) },
      { name: "Failed", values: rounds.map((r) => r.failed) },
      { name: "Opens", values: rounds.map((r) => r.opens) },
      { name: "Conversions", values: rounds.map((r) => r.conversions) },
    ],
    format: "count",
  };
  const more = leftOut(s.rounds.length, rounds.length, "earlier rounds");
  if (more !== undefined) chart.note = more;
  return {
    id: "funnel",
    title: "Delivery funnel",
    text: [
      `${formatCount(s.schedule?.send_rounds ?? s.rounds.length)} send round(s) from ${s.schedule?.first_scheduled_at ?? "-"} to ${s.schedule?.last_scheduled_at ?? "-"}; counts are event rows.`,
    ],
    charts: [chart],
    tables: [],
  };
}

function abSection(s: CampaignSummary): Section {
  const groups = s.ab_test?.groups ?? [];
  const section: Section = { id: "ab", title: "A/B test", text: [], charts: [], tables: [] };
  if (groups.length < 2) {
    section.text.push("One send group: no A/B comparison.");
  } else {
    section.charts.push({
      id: "ab-rates",
      title: "Rates by group",
      type: "bar",
      categoryLabel: "Group",
      categories: groups.map((g) => g.group),
      series: [
        { name: "Open rate (users)", values: groups.map((g) => g.open_rate_users) },
        {
          name: "Conversion rate of openers",
          values: groups.map((g) => g.conversion_rate_by_opens),
        },
      ],
      format: "percent",
    });
  }
  const byName = new Map(groups.map((g) => [g.group, g]));
  const categories: string[] = [];
  const est: Array<number | null> = [];
  const low: Array<number | null> = [];
  const high: Array<number | null> = [];
  const verdicts: string[][] = [];
  for (const c of s.ab_test?.comparisons ?? []) {
    const g = byName.get(c.group);
    const others = groups.filter(
      (o) => o.group !== c.group && (c.versus === o.group || !byName.has(c.versus)),
    );
    if (g === undefined || others.length === 0) continue;
    const sum = (f: (x: (typeof groups)[number]) => number) => others.reduce((a, o) => a + f(o), 0);
    const ci =
      c.metric === "open_rate"
        ? differenceInterval(
            sum((o) => o.opened_users),
            sum((o) => o.received_users),
            g.opened_users,
            g.received_users,
          )
        : differenceInterval(
            sum((o) => o.converted_openers),
            sum((o) => o.open_users),
            g.converted_openers,
            g.open_users,
          );
    const label = `${c.metric === "open_rate" ? "Open rate" : "Conversion rate"}: ${c.group} − ${c.versus}`;
    categories.push(label);
    est.push(ci?.difference ?? null);
    low.push(ci?.low ?? null);
    high.push(ci?.high ?? null);
    verdicts.push([label, percent(c.rate), percent(c.versus_rate), formatP(c.p_value), c.verdict]);
  }
  const control = s.ab_test?.control;
  if (control?.comparison) {
    const received = groups.reduce((a, g) => a + g.received_users, 0);
    const ci = differenceInterval(
      control.converted_users,
      control.assigned_users,
      Math.round(control.send_groups_conversion_rate * received),
      received,
    );
    const label = `Conversion per user: send groups − ${control.comparison.versus}`;
    categories.push(label);
    est.push(ci?.difference ?? null);
    low.push(ci?.low ?? null);
    high.push(ci?.high ?? null);
    verdicts.push([
      label,
      percent(control.comparison.rate),
      percent(control.comparison.versus_rate),
      formatP(control.comparison.p_value),
      control.comparison.verdict,
    ]);
  }
  if (categories.length > 0) {
    section.charts.push({
      id: "ab-difference",
      title: "Difference between groups, with 95% confidence interval",
      type: "interval",
      categoryLabel: "Comparison",
      categories,
      series: [
        { name: "Difference (points)", values: est },
        { name: "Low", values: low },
        { name: "High", values: high },
      ],
      format: "percent",
      note: "An interval that crosses 0 means the file cannot tell the groups apart.",
    });
    section.tables.push({
      caption: "Significance tests (two-proportion z-test)",
      columns: ["Comparison", "Rate", "Versus", "p-value", "Verdict"],
      rows: verdicts,
      numeric: [false, true, true, true, false],
    });
  }
  if (control) section.text.push(control.note);
  return section;
}

function formatP(p: number | null): string {
  if (p === null) return "-";
  return p < 0.001 ? "< 0.001" : p.toFixed(3);
}

function timingSection(s: CampaignSummary): Section {
  const timing = s.timing;
  const section: Section = {
    id: "timing",
    title: "When people open",
    text: [],
    charts: [],
    tables: [],
  };
  if (!timing) return section;
  section.charts.push({
    id: "opens-by-hour",
    title: `Opens by hour of day (${timing.time_zone})`,
    type: "bar",
    categoryLabel: "Hour",
    categories: timing.opens_by_hour.map((_, h) => String(h).padStart(2, "0")),
    series: [{ name: "Opens", values: timing.opens_by_hour }],
    format: "count",
  });
  const r = timing.receipt_to_first_open;
  if (r.pairs > 0) {
    section.charts.push({
      id: "first-open",
      title: "Time from receipt to first open",
      type: "hbar",
      categoryLabel: "Statistic",
      categories: ["Median", "90th percentile"],
      series: [{ name: "Time", values: [r.median_seconds, r.p90_seconds] }],
      format: "seconds",
      note: `${formatCount(r.pairs)} users who received and opened${r.opens_before_receipt > 0 ? `; ${formatCount(r.opens_before_receipt)} opens logged before their receipt were left out` : ""}.`,
    });
  } else {
    section.text.push("No user both received and opened a message: no time to first open.");
  }
  return section;
}

function failureSection(s: CampaignSummary): Section {
  const section: Section = { id: "failures", title: "Failures", text: [], charts: [], tables: [] };
  const failures = s.failures ?? s.error_codes.map((e) => ({ ...e, sample_message: "" }));
  if (failures.length === 0) {
    section.text.push("No failed sends.");
  } else {
    const shown = failures.slice(0, MAX_FAILURE_CODES);
    const chart: Chart = {
      id: "failures-by-code",
      title: "Failures by error code",
      type: "hbar",
      categoryLabel: "Error code",
      categories: shown.map((f) => f.error_code || "(none)"),
      series: [{ name: "Failures", values: shown.map((f) => f.count) }],
      format: "count",
    };
    const more = leftOut(failures.length, shown.length, "error codes");
    if (more !== undefined) chart.note = more;
    section.charts.push(chart);
    section.tables.push({
      caption: "Error codes with a sample message (carrier text)",
      columns: ["Error code", "Failures", "Sample message"],
      rows: shown.map((f) => [f.error_code || "(none)", formatCount(f.count), f.sample_message]),
      numeric: [false, true, false],
    });
  }
  const channels = s.delivery?.by_channel ?? [];
  if (channels.length > 0) {
    section.charts.push({
      id: "delivery-by-channel",
      title: "Delivery by channel",
      type: "bar",
      categoryLabel: "Channel",
      categories: channels.map((c) => c.channel || "(none)"),
      series: [
        { name: "Received", values: channels.map((c) => c.received) },
        { name: "Failed", values: channels.map((c) => c.failed) },
      ],
      format: "count",
      note: channels
        .map((c) => `${c.channel || "(none)"} ${percent(c.success_rate)} success`)
        .join(", "),
    });
  }
  return section;
}

// ---------------------------------------------------------------------------------------------
// Scenario XLSX

const SEND = "발송 수(건)";
const OPEN = "오픈 수(건)";
const CONV = "전환 수(건)";

function scenarioReport(s: ScenarioSummary): ReportModel {
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
      `${formatCount(s.branches.length - MAX_BRANCH_CHARTS)} more branch point(s) in structuredContent.`,
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

// ---------------------------------------------------------------------------------------------
// campaign_metrics

interface MetricsSums {
  task_count: number;
  sent_count: number;
  received_count: number;
  open_count: number;
  click_count: number;
  purchase_count: number;
  revenue: Record<string, number>;
  cost: Record<string, number>;
  computed_open_rate: number | null;
  computed_conversion_rate: number | null;
}

interface CampaignMetricsData {
  window?: { kst?: string };
  matched_campaigns?: number;
  more_not_shown?: number;
  campaigns: Array<
    MetricsSums & { _id: string; name: string; schedule_type: string; is_ab_test: boolean }
  >;
  totals: MetricsSums;
  tasks?: Array<{
    _id: string;
    campaign_id: string;
    scheduled_at: string;
    channel: string;
    sent_count: number;
    received_count: number;
    open_count: number;
    purchase_count: number;
  }>;
  tasks_not_shown?: number;
}

function metricsReport(m: CampaignMetricsData): ReportModel {
  const t = m.totals;
  const kpis: Kpi[] = [
    { label: "Campaigns", value: formatCount(m.matched_campaigns ?? m.campaigns.length) },
    { label: "Rounds", value: formatCount(t.task_count) },
    { label: "Sent", value: formatCount(t.sent_count) },
    { label: "Received", value: formatCount(t.received_count) },
    { label: "Open rate", value: percent(t.computed_open_rate), note: "opens / received" },
    { label: "Purchases", value: formatCount(t.purchase_count) },
    { label: "Revenue", value: money(t.revenue) },
  ];
  const shown = m.campaigns.slice(0, MAX_CAMPAIGNS_CHARTED);
  const label = (c: { name: string; _id: string }) => truncate(c.name || c._id, 26);
  const ranked: Section = {
    id: "campaigns",
    title: "Campaigns ranked",
    text: [],
    charts: [],
    tables: [],
  };
  if (shown.length === 0) ranked.text.push("No campaign has rounds in this window.");
  else {
    const more = leftOut(m.campaigns.length, shown.length, "campaigns");
    const notShown = m.more_not_shown ?? 0;
    ranked.charts.push({
      id: "campaign-volume",
      title: "Sent and received per campaign",
      type: "hbar",
      categoryLabel: "Campaign",
      categories: shown.map(label),
      series: [
        { name: "Sent", values: shown.map((c) => c.sent_count) },
        { name: "Received", values: shown.map((c) => c.received_count) },
      ],
      format: "count",
      ...(more !== undefined || notShown > 0
        ? {
            note: [
              more,
              notShown > 0
                ? `${formatCount(notShown)} matching campaigns not returned (raise top_n).`
                : "",
            ]
              .filter(Boolean)
              .join(" "),
          }
        : {}),
    });
    ranked.charts.push({
      id: "campaign-rates",
      title: "Open and conversion rate per campaign",
      type: "hbar",
      categoryLabel: "Campaign",
      categories: shown.map(label),
      series: [
        { name: "Open rate", values: shown.map((c) => c.computed_open_rate) },
        {
          name: "Conversion rate (by opens)",
          values: shown.map((c) => c.computed_conversion_rate),
        },
      ],
      format: "percent",
    });
    ranked.tables.push({
      caption: "Campaigns with their IDs, rounds and money",
      columns: ["Campaign", "_id", "Type", "A/B", "Rounds", "Purchases", "Revenue", "Cost"],
      rows: shown.map((c) => [
        c.name,
        c._id,
        c.schedule_type,
        c.is_ab_test ? "A/B" : "",
        formatCount(c.task_count),
        formatCount(c.purchase_count),
        money(c.revenue),
        money(c.cost),
      ]),
      numeric: [false, false, false, false, true, true, true, true],
    });
  }
  const rounds: Section = {
    id: "rounds",
    title: "Rounds over time",
    text: [],
    charts: [],
    tables: [],
  };
  const tasks = [...(m.tasks ?? [])].sort((a, b) => a.scheduled_at.localeCompare(b.scheduled_at));
  if (m.tasks === undefined) {
    rounds.text.push(
      'Call campaign_metrics with "include_tasks": true to see each round over time.',
    );
  } else if (tasks.length === 0) {
    rounds.text.push("No rounds returned.");
  } else {
    const recent = tasks.slice(-MAX_TASKS_CHARTED);
    const names = new Map(m.campaigns.map((c) => [c._id, c.name]));
    const more = tasks.length - recent.length + (m.tasks_not_shown ?? 0);
    rounds.charts.push({
      id: "rounds-over-time",
      title: "Rounds over time",
      type: "bar",
      categoryLabel: "Scheduled (KST)",
      categories: recent.map(
        (x) =>
          `${kstMinute(x.scheduled_at)} ${truncate(names.get(x.campaign_id) ?? x.campaign_id, 14)}`,
      ),
      series: [
        { name: "Received", values: recent.map((x) => x.received_count) },
        { name: "Opens", values: recent.map((x) => x.open_count) },
        { name: "Purchases", values: recent.map((x) => x.purchase_count) },
      ],
      format: "count",
      ...(more > 0 ? { note: `${formatCount(more)} earlier round(s) not drawn.` } : {}),
    });
  }
  return {
    kind: "campaign_metrics",
    title: "Campaign metrics",
    subtitle: m.window?.kst === undefined ? "" : `Window ${m.window.kst}`,
    kpis,
    sections: [ranked, rounds],
    notes: [],
  };
}

/** "2026-11-20T10:00:00Z" as "11-20 19:00" in KST (the service's zone; fixed +9, no DST). */
function kstMinute(iso: string): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso.slice(5, 16);
  return new Date(ms + 9 * 3600_000).toISOString().slice(5, 16).replace("T", " ");
}
