import type { ScenarioSummary } from "../analysis/schemas.js";
import { answerReport, isQueryResult } from "./answer-report.js";
import { type CampaignReportData, campaignReport } from "./campaign-report.js";
import { counted, type ReportText, reportText, warningText } from "./i18n/index.js";
import { type CampaignMetricsData, metricsReport } from "./metrics-report.js";
import { scenarioReport } from "./scenario-report.js";

/**
 * What the report page draws, built from a tool's structuredContent: summarize_export (campaign
 * CSV or scenario XLSX), campaign_metrics or query_export. Pure data and text, no DOM: the page bundles it, the
 * tests call it in Node. Every chart carries its own data, from which its table is made, so no
 * chart is without a table view. Each kind of result has its builder (campaign-report.ts,
 * scenario-report.ts, metrics-report.ts, answer-report.ts); this file holds the shapes they build and the table
 * view of a chart. Every word comes from the catalogue of the language asked for (i18n/), every
 * figure is written by Intl in its locale.
 */

export type ValueFormat = "count" | "number" | "percent" | "seconds";

/**
 * Where the page is shown: a file with the data written in (the `report` command,
 * summarize_export's `report: true`), or the MCP App view beside the tool result. What a chart
 * leaves out is read in full elsewhere in each, so its note says where.
 */
export type ReportPlace = "file" | "view";

export interface Series {
  name: string;
  values: Array<number | null>;
  /** A count of failures: drawn in the failure colour. */
  failure?: boolean;
}

export interface Chart {
  id: string;
  title: string;
  /** bar: vertical bars per category, side by side; stacked: on top of each other; hbar:
   * horizontal; line: one line per series over the categories; interval: series[0] an estimate
   * with series[1] low and series[2] high; scatter: a point per category and series value; box:
   * per category a box from series[2] (25th percentile) to series[3] (75th) with a line at
   * series[1] (median), and series[0] as a dot against it. */
  type: "bar" | "stacked" | "hbar" | "line" | "interval" | "scatter" | "box";
  categoryLabel: string;
  categories: string[];
  series: Series[];
  format: ValueFormat;
  /**
   * A line or scatter plot along a continuous x: where each category stands (seconds since 1970
   * for times, read as UTC wall time; the number itself for numbers). Without it, categories
   * stand one step apart.
   */
  positions?: { kind: "time" | "number"; values: number[] };
  /** A box chart's dot outside its box's usual range, per category (said in words too). */
  flags?: Array<RangeFlag | null>;
  note?: string;
}

/** Where a value stands against a usual range (a baseline's 1.5 IQR fences). */
export type RangeFlag = "above" | "below";

/**
 * How a change reads, for the colour of its cell: better (more sent, a higher rate) or worse.
 * The cell says the same with its arrow and sign; the colour only repeats it.
 */
export type Tone = "better" | "worse";

export interface Table {
  caption: string;
  columns: string[];
  rows: string[][];
  /** Right-aligned columns. */
  numeric: boolean[];
  /** Per row and column, how a change reads (see Tone); absent or null: plain. */
  tones?: Array<Array<Tone | null>>;
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
  kind: "campaign_event_data" | "scenario_daily_metrics" | "campaign_metrics" | "query_answer";
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

/**
 * The model of a tool result, in the words and formats of `text` (by default English with en-US
 * figures). The same data gives the same shape in every language: only the text differs.
 */
export function buildReport(
  data: unknown,
  place: ReportPlace,
  text: ReportText = reportText(),
): ReportModel {
  if (typeof data !== "object" || data === null) {
    throw new ReportDataError(text.m.page.noReportData);
  }
  const record = data as Record<string, unknown>;
  let model: ReportModel;
  if (record.kind === "campaign_event_data") {
    model = campaignReport(data as CampaignReportData, place, text);
  } else if (record.kind === "scenario_daily_metrics") {
    model = scenarioReport(data as ScenarioSummary, text);
  } else if (Array.isArray(record.campaigns) && typeof record.totals === "object") {
    model = metricsReport(data as CampaignMetricsData, place, text);
  } else if (isQueryResult(record)) {
    model = answerReport(data, text);
  } else {
    throw new ReportDataError(text.m.page.unknownData);
  }
  for (const chart of model.sections.flatMap((s) => s.charts)) alignSeries(chart);
  model.notes = model.notes.map((n) => warningText(n, text.m));
  // An answer's `truncated` also says max_rows cut it: only `more` says the budget did.
  const cutByBudget =
    model.kind === "query_answer" ? record.more !== undefined : record.truncated === true;
  const cut = cutByBudget ? budgetNote(record, text) : undefined;
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
function budgetNote(record: Record<string, unknown>, t: ReportText): string {
  const more = record.more as
    | { omitted?: Array<{ field: string; shown: number; total: number }>; full_result?: string }
    | undefined;
  const lists = (more?.omitted ?? []).map((o) =>
    t.m.notes.cutList(o.field, counted(t, o.shown), counted(t, o.total)),
  );
  return t.m.notes.budget(lists, more?.full_result);
}

/** The table view of a chart: one row per category, one column per series. */
export function chartTable(chart: Chart, t: ReportText = reportText()): Table {
  if (chart.type === "box") return boxTable(chart, t);
  if (chart.type === "interval") {
    const [estimate, low, high] = chart.series;
    const cell = (s: Series | undefined, i: number) => t.f.signed(s?.values[i], chart.format);
    return {
      caption: chart.title,
      columns: [chart.categoryLabel, estimate?.name ?? "", t.m.stats.ciLow, t.m.stats.ciHigh],
      rows: chart.categories.map((c, i) => [
        t.f.categoryFull(c),
        cell(estimate, i),
        cell(low, i),
        cell(high, i),
      ]),
      numeric: [false, true, true, true],
    };
  }
  return {
    caption: chart.title,
    columns: [chart.categoryLabel, ...chart.series.map((s) => s.name)],
    rows: chart.categories.map((c, i) => [
      t.f.categoryFull(c),
      ...chart.series.map((s) => t.f.value(s.values[i], chart.format, t.m.page.missing)),
    ]),
    numeric: [false, ...chart.series.map(() => true)],
  };
}

/**
 * A box chart as a table: the value, the median and quartiles, and whether the value is outside
 * the usual range, in words.
 */
function boxTable(chart: Chart, t: ReportText): Table {
  const b = t.m.baseline;
  const cell = (i: number, s: number) =>
    t.f.value(chart.series[s]?.values[i], chart.format, t.m.page.missing);
  return {
    caption: chart.title,
    columns: [chart.categoryLabel, ...chart.series.map((s) => s.name), b.againstRange],
    rows: chart.categories.map((c, i) => [
      c,
      ...chart.series.map((_, s) => cell(i, s)),
      rangeWord(chart, i, t),
    ]),
    numeric: [false, ...chart.series.map(() => true), false],
  };
}

/** "Above the usual range", "below", "within", or "-" without a value or a box. */
export function rangeWord(chart: Chart, i: number, t: ReportText): string {
  const b = t.m.baseline;
  const flag = chart.flags?.[i] ?? null;
  if (flag === "above") return b.above;
  if (flag === "below") return b.below;
  const known = (s: number) => typeof chart.series[s]?.values[i] === "number";
  return known(0) && known(2) && known(3) ? b.within : t.m.page.missing;
}

/** Marks a chart draws: one per value present (a bar, a point, an interval, a dot). */
export function markCount(chart: Chart): number {
  const drawn =
    chart.type === "interval" || chart.type === "box" ? chart.series.slice(0, 1) : chart.series;
  return drawn.reduce((a, s) => a + s.values.filter((v) => v !== null).length, 0);
}
