import {
  type ColumnFormat,
  cellText,
  columnFormats,
  labelText,
  valueFormat,
} from "./answer-cells.js";
import {
  type AnswerColumn,
  CHART_TYPES,
  ChartChoiceError,
  type ChartRequest,
  type ChartSpec,
  type ChartType,
  chooseChart,
} from "./chart-choice.js";
import { MAX_CATEGORIES, MAX_POINTS, MAX_SERIES, plotData } from "./chart-data.js";
import { counted, type ReportText, reportText } from "./i18n/index.js";
import type { Chart, Kpi, ReportModel, Section, Table } from "./model.js";

/**
 * The report of a query_export answer (or of `query --report`): its chart, chosen by the answer's
 * shape or by the chart the caller asked for (chart-choice.ts), and its whole table. Without sql
 * the tool describes the exports; that is drawn as a table of the tables.
 */

/** The answer as the tool's structuredContent and the CLI's page hold it. */
export interface AnswerData {
  columns: AnswerColumn[];
  rows: unknown[][];
  row_count?: number;
  truncated_by?: "max_rows" | "characters";
  /** The chart drawn: the tool and the CLI write it; absent, the shape chooses. */
  chart?: { type: string; x?: string | null; y?: string[]; series?: string | null };
  /** The statement (the CLI's page shows it). */
  sql?: string;
  /** Set when the tool-result budget cut the rows. */
  more?: unknown;
}

interface DescriptionData {
  description: { tables: Array<{ name: string; rows: number; columns: AnswerColumn[] }> };
}

/** Rows the page's table shows; beyond them its note says how many more there are. */
export const TABLE_ROWS = 1000;

const isColumn = (c: unknown): c is AnswerColumn =>
  typeof c === "object" &&
  c !== null &&
  typeof (c as AnswerColumn).name === "string" &&
  typeof (c as AnswerColumn).type === "string";

/** A query_export result: an answer (columns and rows) or a description of the exports. */
export function isQueryResult(record: Record<string, unknown>): boolean {
  if (Array.isArray(record.columns) && Array.isArray(record.rows)) {
    return record.columns.every(isColumn) && record.rows.every(Array.isArray);
  }
  const description = record.description as { tables?: unknown } | undefined;
  return typeof description === "object" && Array.isArray(description?.tables);
}

/**
 * A result with the statement of the call that made it (the view gets the call's arguments
 * apart from its result): an answer shows its SQL; any other result is left as it is.
 */
export function withStatement(result: unknown, args: Record<string, unknown> | undefined): unknown {
  const sql = args?.sql;
  if (typeof result !== "object" || result === null || typeof sql !== "string") return result;
  if (!isQueryResult(result as Record<string, unknown>) || "sql" in result) return result;
  return { ...result, sql };
}

/**
 * The chart the answer names (checked again), or the one its shape calls for. A named chart that
 * is the shape's own keeps the shape's reason: only a chart chosen otherwise reads as asked.
 */
export function answerChart(data: AnswerData): ChartSpec {
  const byShape = chooseChart(data.columns, data.rows);
  const named = data.chart;
  if (named === undefined || !(CHART_TYPES as readonly string[]).includes(named.type)) {
    return byShape;
  }
  const request: ChartRequest = {
    type: named.type as ChartType,
    ...(named.x == null ? {} : { x: named.x }),
    ...(named.y === undefined || named.y.length === 0 ? {} : { y: named.y }),
    ...(named.series == null ? {} : { series: named.series }),
  };
  const same =
    request.type === byShape.type &&
    (request.x ?? null) === byShape.x &&
    (request.series ?? null) === byShape.series &&
    JSON.stringify(request.y ?? []) === JSON.stringify(byShape.y);
  if (same) return byShape;
  try {
    return chooseChart(data.columns, data.rows, request);
  } catch (error) {
    // Rows cut by the result budget may no longer fit the chart asked for: the shape decides.
    if (!(error instanceof ChartChoiceError)) throw error;
    return byShape;
  }
}

/** The chart as structuredContent carries it, its reason in English for the model. */
export function chartField(spec: ChartSpec) {
  return {
    type: spec.type,
    x: spec.x,
    y: spec.y,
    series: spec.series,
    reason: reportText("en").m.answer.reasons[spec.reason],
  };
}

/** One line for the model's text, in English: what the person sees drawn, and why. */
export function chartLine(spec: ChartSpec): string {
  const a = reportText("en").m.answer;
  const of =
    spec.type === "kpi"
      ? spec.y.join(", ")
      : spec.type === "table"
        ? ""
        : chartTitle(spec, reportText("en"));
  return `Chart: ${a.types[spec.type].toLowerCase()}${of === "" ? "" : ` of ${of}`} (${a.reasons[spec.reason]}).`;
}

function chartTitle(spec: ChartSpec, t: ReportText): string {
  const a = t.m.answer;
  const y = spec.y.join(", ");
  if (spec.x === null || y === "") return "";
  if (spec.type === "scatter") return a.against(y, spec.x);
  return spec.series === null ? a.by(y, spec.x) : a.byBoth(y, spec.x, spec.series);
}

export function answerReport(data: unknown, t: ReportText): ReportModel {
  const record = data as Record<string, unknown>;
  if (!Array.isArray(record.columns)) return descriptionReport(data as DescriptionData, t);
  const answer = data as AnswerData;
  const a = t.m.answer;
  const formats = columnFormats(answer.columns, answer.rows);
  const spec = answerChart(answer);
  const total = answer.row_count ?? answer.rows.length;
  const kpis: Kpi[] =
    spec.type === "kpi"
      ? spec.y.map((name) => {
          const i = answer.columns.findIndex((c) => c.name === name);
          const format = formats[i] as ColumnFormat;
          return { label: name, value: cellText(answer.rows[0]?.[i], format.format, t) };
        })
      : [];
  const kind = a.kind(a.types[spec.type], a.reasons[spec.reason]);
  const sections: Section[] = [];
  const drawn = spec.type === "line" || spec.type === "bar" || spec.type === "scatter";
  if (drawn) {
    sections.push({
      id: "chart",
      title: a.chart,
      text: [kind],
      charts: [answerFigure(answer, spec, formats, t)],
      tables: [],
    });
  }
  const text = [...(drawn ? [] : [kind]), ...rowNotes(answer, total, t)];
  sections.push({
    id: "answer",
    title: a.table,
    text,
    charts: [],
    tables: [answerTable(answer, formats, t)],
  });
  return {
    kind: "query_answer",
    title: a.title,
    subtitle: a.subtitle(counted(t, total), counted(t, answer.columns.length)),
    kpis,
    sections,
    notes: [],
  };
}

function rowNotes(answer: AnswerData, total: number, t: ReportText): string[] {
  const a = t.m.answer;
  const returned = answer.rows.length;
  const notes: string[] = [];
  if (total === 0) notes.push(a.noRows);
  if (total > returned) {
    const why =
      answer.more !== undefined
        ? a.whyBudget
        : answer.truncated_by === "characters"
          ? a.whyCharacters
          : a.whyMaxRows;
    notes.push(a.rowsCut(counted(t, returned), counted(t, total), why));
  }
  if (returned > TABLE_ROWS) {
    notes.push(a.tableCut(counted(t, TABLE_ROWS), counted(t, returned)));
  }
  return notes;
}

function answerTable(answer: AnswerData, formats: ColumnFormat[], t: ReportText): Table {
  const a = t.m.answer;
  return {
    caption:
      answer.sql === undefined
        ? a.subtitle(counted(t, answer.rows.length), counted(t, answer.columns.length))
        : a.sql(answer.sql),
    columns: answer.columns.map((c) => c.name),
    rows: answer.rows
      .slice(0, TABLE_ROWS)
      .map((row) => answer.columns.map((_, i) => cellText(row[i], formatOf(formats, i), t))),
    numeric: formats.map((f) => f.kind === "number"),
  };
}

const formatOf = (formats: ColumnFormat[], i: number) => formats[i]?.format ?? "raw";

/** The chart of a line, bar or scatter spec, with a note on what it leaves out. */
function answerFigure(
  answer: AnswerData,
  spec: ChartSpec,
  formats: ColumnFormat[],
  t: ReportText,
): Chart {
  const a = t.m.answer;
  const at = (name: string | null) => answer.columns.findIndex((c) => c.name === name);
  const data = plotData(spec, answer.columns, answer.rows);
  const x = spec.x ?? "";
  const series = spec.series;
  const xFormat = formatOf(formats, at(x));
  const seriesFormat = formatOf(formats, at(series));
  const left: string[] = [];
  const c = (n: number) => counted(t, n);
  if (data.left.categories > 0) {
    left.push(a.moreCategories(c(data.left.categories), x, c(MAX_CATEGORIES)));
  }
  if (data.left.series > 0) {
    left.push(a.moreSeries(c(data.left.series), series ?? x, c(MAX_SERIES)));
  }
  if (data.left.points > 0) left.push(a.morePoints(c(data.left.points), c(MAX_POINTS)));
  if (data.left.repeats > 0) left.push(a.repeats(c(data.left.repeats), x));
  if (data.left.unplaced > 0) left.push(a.unplaced(c(data.left.unplaced), x));
  const note = left.length === 0 ? undefined : t.m.notes.notDrawn(left.join("; "), a.whereTable);
  const type: Chart["type"] =
    spec.type === "bar"
      ? spec.stacked
        ? "stacked"
        : "bar"
      : spec.type === "line"
        ? "line"
        : "scatter";
  return {
    id: "answer",
    title: chartTitle(spec, t),
    type,
    categoryLabel: x,
    categories: data.xs.map((v) => labelText(v, xFormat, t)),
    series: data.series.map((s) => ({
      name: series === null ? String(s.key) : labelText(s.key, seriesFormat, t),
      values: s.values,
    })),
    format: valueFormat(spec.y.map((name) => formatOf(formats, at(name)))),
    ...(data.positions === undefined ? {} : { positions: data.positions }),
    ...(note === undefined ? {} : { note }),
  };
}

function descriptionReport(data: DescriptionData, t: ReportText): ReportModel {
  const a = t.m.answer;
  const tables = data.description.tables;
  return {
    kind: "query_answer",
    title: a.describeTitle,
    subtitle: "",
    kpis: [],
    sections: [
      {
        id: "tables",
        title: a.describeTitle,
        text: [a.describeText],
        charts: [],
        tables: [
          {
            caption: a.describeTitle,
            columns: [a.tableName, a.rows, a.columns],
            rows: tables.map((table) => [
              table.name,
              t.f.value(table.rows, "count"),
              table.columns.map((c) => `${c.name} ${c.type}`).join(", "),
            ]),
            numeric: [false, true, false],
          },
        ],
      },
    ],
    notes: [],
  };
}
