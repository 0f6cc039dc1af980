import { describe, expect, it } from "vitest";
import { chartLine, withStatement } from "../../src/report/answer-report.js";
import { chooseChart } from "../../src/report/chart-choice.js";
import { reportText } from "../../src/report/i18n/index.js";
import { buildReport, chartTable, markCount, type ReportModel } from "../../src/report/model.js";

/**
 * The report of a query_export answer: its chart (by shape or as asked), its whole table in the
 * page's words and figures, and notes on what the chart and the result left out.
 */

const byChannel = {
  columns: [
    { name: "channel", type: "VARCHAR" },
    { name: "sent", type: "BIGINT" },
    { name: "open_rate", type: "DOUBLE" },
  ],
  rows: [
    ["alimtalk", 12_345, 0.1234],
    ["app_push", 678, 0.5],
    [null, 3, 0],
  ],
  row_count: 3,
  truncated: false,
};

function chartOf(model: ReportModel) {
  const chart = model.sections.flatMap((s) => s.charts)[0];
  if (chart === undefined) throw new Error("the model has no chart");
  return chart;
}

function answerTable(model: ReportModel) {
  const table = model.sections.find((s) => s.id === "answer")?.tables[0];
  if (table === undefined) throw new Error("the model has no answer table");
  return table;
}

describe("the report of a query answer", () => {
  it("a GROUP BY answer: bars per numeric column, and the whole table in the page's figures", () => {
    const model = buildReport(byChannel, "view", reportText("en"));
    expect(model.kind).toBe("query_answer");
    expect(model.subtitle).toBe("3 rows × 3 columns");
    const chart = chartOf(model);
    expect(chart).toMatchObject({
      type: "bar",
      title: "sent, open_rate by channel",
      categoryLabel: "channel",
      categories: ["alimtalk", "app_push", "(none)"],
      series: [
        { name: "sent", values: [12_345, 678, 3] },
        { name: "open_rate", values: [0.1234, 0.5, 0] },
      ],
    });
    expect(markCount(chart)).toBe(6);
    expect(model.sections[0]?.text).toEqual([
      "Bar chart — a category with numbers: a bar per numeric column.",
    ]);
    const table = answerTable(model);
    expect(table.columns).toEqual(["channel", "sent", "open_rate"]);
    expect(table.rows).toEqual([
      ["alimtalk", "12,345", "12.3%"],
      ["app_push", "678", "50.0%"],
      ["-", "3", "0.0%"],
    ]);
    expect(table.numeric).toEqual([false, true, true]);
    // Korean words, Korean figures; the column names are the answer's own.
    const ko = buildReport(byChannel, "view", reportText("ko"));
    expect(ko.title).toBe("질의 결과");
    expect(ko.subtitle).toBe("3행 × 3열");
    expect(chartOf(ko).title).toBe("channel별 sent, open_rate");
    expect(answerTable(ko).columns).toEqual(["channel", "sent", "open_rate"]);
    // A host in de-DE: English words, German figures.
    const de = buildReport(byChannel, "view", reportText("en", "de-DE"));
    expect(answerTable(de).rows[0]).toEqual(["alimtalk", "12.345", "12,3\u00a0%"]);
  });

  it("a time answer: a line per category along real time, dates in the locale", () => {
    const data = {
      columns: [
        { name: "day", type: "TIMESTAMP" },
        { name: "group", type: "VARCHAR" },
        { name: "opens", type: "BIGINT" },
      ],
      rows: [
        ["2025-03-01 00:00:00", "A", 5],
        ["2025-03-01 00:00:00", "B", 7],
        ["2025-03-04 00:00:00", "A", 2],
      ],
    };
    const chart = chartOf(buildReport(data, "file", reportText("ko")));
    expect(chart.type).toBe("line");
    expect(chart.categories).toEqual(["2025. 3. 1. 00:00", "2025. 3. 4. 00:00"]);
    expect(chart.positions).toEqual({
      kind: "time",
      values: [Date.UTC(2025, 2, 1) / 1000, Date.UTC(2025, 2, 4) / 1000],
    });
    expect(chart.series).toEqual([
      { name: "A", values: [5, 2] },
      { name: "B", values: [7, null] },
    ]);
    expect(chart.title).toBe("day·group별 opens");
  });

  it("two categories: stacked bars; a chart asked for is drawn as asked", () => {
    const data = {
      columns: [
        { name: "task_id", type: "VARCHAR" },
        { name: "event_role", type: "VARCHAR" },
        { name: "n", type: "BIGINT" },
      ],
      rows: [
        ["t1", "sent", 10],
        ["t1", "open", 4],
        ["t2", "sent", 8],
      ],
    };
    const stacked = chartOf(buildReport(data, "view"));
    expect(stacked.type).toBe("stacked");
    expect(stacked.series.map((s) => s.name)).toEqual(["sent", "open"]);
    const asked = buildReport(
      { ...data, chart: { type: "bar", x: "event_role", y: ["n"], series: null } },
      "view",
    );
    expect(chartOf(asked)).toMatchObject({ type: "bar", categories: ["sent", "open"] });
    expect(asked.sections[0]?.text).toEqual(["Bar chart — as the chart argument asked."]);
    // The chart the shape calls for, named as the tool names it: the shape's reason stays.
    const named = buildReport(
      { ...data, chart: { type: "bar", x: "task_id", y: ["n"], series: "event_role" } },
      "view",
    );
    expect(named.sections[0]?.text).toEqual([
      "Bar chart — two categories and a number: bars stacked by the second.",
    ]);
  });

  it("one row: its numbers as key-figure cards, the row in the table", () => {
    const model = buildReport(
      {
        columns: [
          { name: "rows", type: "BIGINT" },
          { name: "click_rate", type: "DOUBLE" },
        ],
        rows: [[1_234_567, 0.031]],
      },
      "view",
      reportText("ko"),
    );
    expect(model.kpis).toEqual([
      { label: "rows", value: "1,234,567" },
      { label: "click_rate", value: "3.1%" },
    ]);
    expect(model.sections.flatMap((s) => s.charts)).toEqual([]);
    expect(model.sections[0]?.text[0]).toBe("핵심 수치 — 한 행: 숫자마다 카드 하나.");
    expect(answerTable(model).rows).toEqual([["1,234,567", "3.1%"]]);
  });

  it("text only: the table alone, saying why", () => {
    const model = buildReport(
      {
        columns: [{ name: "task_id", type: "VARCHAR" }],
        rows: [["t1"], ["t2"]],
        sql: "SELECT task_id FROM events",
      },
      "file",
    );
    expect(model.kpis).toEqual([]);
    expect(model.sections.map((s) => s.id)).toEqual(["answer"]);
    expect(model.sections[0]?.text).toEqual(["Table — the answer has no numeric column."]);
    expect(answerTable(model).caption).toBe("SQL: SELECT task_id FROM events");
  });

  it("says what the chart leaves out and which rows the result did not return", () => {
    const rows = Array.from({ length: 45 }, (_, i) => [`E${i}`, 100 - i]);
    const data = {
      columns: [
        { name: "error_code", type: "VARCHAR" },
        { name: "n", type: "BIGINT" },
      ],
      rows,
      row_count: 900,
      truncated: true,
      truncated_by: "max_rows",
    };
    const model = buildReport(data, "view");
    expect(chartOf(model).categories).toHaveLength(30);
    expect(chartOf(model).note).toBe(
      "Not drawn: 15 more error_code values (the 30 largest are drawn); the answer's table has them all.",
    );
    expect(model.sections[1]?.text).toEqual([
      "The answer has 900 rows; 45 were returned (max_rows).",
    ]);
    // max_rows is no cut by the result budget: no budget note.
    expect(model.notes).toEqual([]);
    const budget = buildReport(
      {
        ...data,
        more: {
          omitted: [{ field: "rows", shown: 45, total: 100 }],
          full_result: "crm-result://r1",
        },
      },
      "view",
    );
    expect(budget.sections[1]?.text).toEqual([
      "The answer has 900 rows; 45 were returned (the tool-result budget).",
    ]);
    expect(budget.notes[0]).toContain("the whole result is the resource crm-result://r1");
  });

  it("the view shows an answer's SQL from the call's arguments; other results are left alone", () => {
    const withSql = withStatement(byChannel, { sql: "SELECT 1", files: [] });
    expect(answerTable(buildReport(withSql, "view")).caption).toBe("SQL: SELECT 1");
    expect(answerTable(buildReport(byChannel, "view")).caption).toBe("3 rows × 3 columns");
    const metrics = { campaigns: [], totals: {} };
    expect(withStatement(metrics, { sql: "SELECT 1" })).toBe(metrics);
    expect(withStatement(byChannel, undefined)).toBe(byChannel);
  });

  it("every chart's table view has one row per category", () => {
    const chart = chartOf(buildReport(byChannel, "view"));
    const table = chartTable(chart, reportText("en"));
    expect(table.columns).toEqual(["channel", "sent", "open_rate"]);
    expect(table.rows).toHaveLength(3);
  });

  it("a description of the exports: a table of its tables", () => {
    const model = buildReport(
      {
        summary: "1 export file(s)",
        files: [],
        description: {
          tables: [{ name: "events", rows: 1200, columns: [{ name: "task_id", type: "VARCHAR" }] }],
        },
      },
      "view",
    );
    expect(model.kind).toBe("query_answer");
    expect(model.sections[0]?.tables[0]?.rows).toEqual([["events", "1,200", "task_id VARCHAR"]]);
  });

  it("the model's text says what is drawn, in English", () => {
    const spec = chooseChart(byChannel.columns, byChannel.rows);
    expect(chartLine(spec)).toBe(
      "Chart: bar chart of sent, open_rate by channel (a category with numbers: a bar per numeric column).",
    );
    const kpi = chooseChart(byChannel.columns, byChannel.rows.slice(0, 1));
    expect(chartLine(kpi)).toBe(
      "Chart: key figures of sent, open_rate (one row: each number as a card).",
    );
  });
});
