import { describe, expect, it } from "vitest";
import {
  type AnswerColumn,
  ChartChoiceError,
  chooseChart,
  timePosition,
} from "../../src/report/chart-choice.js";
import { MAX_CATEGORIES, MAX_POINTS, MAX_SERIES, plotData } from "../../src/report/chart-data.js";

/** The shape of an answer decides its chart; a chart asked for is checked against the columns. */

const col = (name: string, type: string): AnswerColumn => ({ name, type });
const days = (n: number) =>
  Array.from({ length: n }, (_, i) =>
    new Date(Date.UTC(2025, 0, 1 + i)).toISOString().slice(0, 10),
  );

/** The message of the ChartChoiceError `work` throws. */
function refusal(work: () => unknown): string {
  try {
    work();
  } catch (error) {
    if (error instanceof ChartChoiceError) return error.message;
    throw error;
  }
  throw new Error("no ChartChoiceError was thrown");
}

describe("the chart an answer's shape calls for", () => {
  it("a time column with numbers: a line per numeric column", () => {
    const columns = [col("day", "TIMESTAMP"), col("opens", "BIGINT"), col("clicks", "BIGINT")];
    const rows = [
      ["2025-03-02 00:00:00", 5, 1],
      ["2025-03-01 00:00:00", 7, 2],
    ];
    expect(chooseChart(columns, rows)).toEqual({
      type: "line",
      x: "day",
      y: ["opens", "clicks"],
      series: null,
      stacked: false,
      reason: "time",
    });
  });

  it("a time column, a category and a number: a line per category value", () => {
    const columns = [col("day", "DATE"), col("channel", "VARCHAR"), col("n", "BIGINT")];
    const rows = [
      ["2025-03-01", "kakao", 5],
      ["2025-03-01", "sms", 3],
    ];
    expect(chooseChart(columns, rows)).toMatchObject({
      type: "line",
      x: "day",
      y: ["n"],
      series: "channel",
      reason: "time_by_category",
    });
  });

  it("dates written as text and integer parts of a time count as time", () => {
    const text = chooseChart(
      [col("month", "VARCHAR"), col("n", "BIGINT")],
      [
        ["2025-03", 1],
        ["2025-04", 2],
      ],
    );
    expect(text).toMatchObject({ type: "line", x: "month", reason: "time" });
    const hour = chooseChart(
      [col("hour", "BIGINT"), col("channel", "VARCHAR"), col("opens", "BIGINT")],
      [
        [9, "sms", 4],
        [10, "sms", 6],
      ],
    );
    expect(hour).toMatchObject({ type: "line", x: "hour", series: "channel", y: ["opens"] });
  });

  it("a category with numbers: grouped bars, one per numeric column", () => {
    const columns = [col("event_role", "VARCHAR"), col("rows", "BIGINT"), col("users", "BIGINT")];
    const rows = [
      ["open", 10, 4],
      ["click", 3, 2],
    ];
    expect(chooseChart(columns, rows)).toEqual({
      type: "bar",
      x: "event_role",
      y: ["rows", "users"],
      series: null,
      stacked: false,
      reason: "category",
    });
    // An integer key (an error code, an ID) is a category, not a measure.
    const codes = chooseChart(
      [col("error_code", "INTEGER"), col("n", "BIGINT")],
      [
        [3001, 4],
        [3002, 1],
      ],
    );
    expect(codes).toMatchObject({ type: "bar", x: "error_code", y: ["n"] });
  });

  it("two categories and a number: stacked bars; side by side when a value is negative", () => {
    const columns = [col("channel", "VARCHAR"), col("group", "VARCHAR"), col("n", "DOUBLE")];
    const rows = [
      ["sms", "A", 3],
      ["sms", "B", 4],
      ["kakao", "A", 5],
    ];
    expect(chooseChart(columns, rows)).toEqual({
      type: "bar",
      x: "channel",
      y: ["n"],
      series: "group",
      stacked: true,
      reason: "two_categories",
    });
    const negative = chooseChart(columns, [...rows, ["kakao", "B", -1]]);
    expect(negative).toMatchObject({
      type: "bar",
      stacked: false,
      reason: "two_categories_grouped",
    });
  });

  it("two numbers: a scatter plot of the second against the first", () => {
    const columns = [col("sent", "BIGINT"), col("open_rate", "DOUBLE")];
    const rows = [
      [100, 0.2],
      [50, 0.4],
    ];
    expect(chooseChart(columns, rows)).toMatchObject({
      type: "scatter",
      x: "sent",
      y: ["open_rate"],
      reason: "two_numbers",
    });
  });

  it("one row: key-figure cards of its numbers", () => {
    const columns = [col("channel", "VARCHAR"), col("sent", "BIGINT"), col("rate", "DOUBLE")];
    expect(chooseChart(columns, [["sms", 10, 0.5]])).toMatchObject({
      type: "kpi",
      y: ["sent", "rate"],
      reason: "one_row",
    });
  });

  it("anything else: the table only", () => {
    const text = [col("task_id", "VARCHAR"), col("channel", "VARCHAR")];
    expect(chooseChart(text, [["t1", "sms"]])).toMatchObject({
      type: "table",
      reason: "no_numbers",
    });
    expect(chooseChart([col("n", "BIGINT")], [])).toMatchObject({
      type: "table",
      reason: "no_rows",
    });
    expect(
      chooseChart(
        [col("n", "BIGINT"), col("props", "JSON")],
        [
          [1, "{}"],
          [2, "{}"],
        ],
      ),
    ).toMatchObject({
      type: "table",
      reason: "no_shape",
    });
  });
});

describe("a chart asked for", () => {
  const columns = [col("day", "DATE"), col("channel", "VARCHAR"), col("n", "BIGINT")];
  const rows = [
    ["2025-03-01", "sms", 3],
    ["2025-03-02", "kakao", 5],
  ];

  it("is drawn as asked, its missing parts filled in", () => {
    expect(chooseChart(columns, rows, { type: "bar", x: "channel" })).toEqual({
      type: "bar",
      x: "channel",
      y: ["n"],
      series: null,
      stacked: false,
      reason: "asked",
    });
    expect(chooseChart(columns, rows, { type: "table" })).toMatchObject({ type: "table" });
    expect(chooseChart(columns, rows, { type: "line", series: "channel" })).toMatchObject({
      x: "day",
      y: ["n"],
      series: "channel",
    });
  });

  it("an unknown column is refused, naming the columns there are with their types", () => {
    expect(refusal(() => chooseChart(columns, rows, { type: "line", x: "date" }))).toBe(
      'chart.x "date" is not a column of the answer. The answer\'s columns: day DATE, channel VARCHAR, n BIGINT.',
    );
    expect(refusal(() => chooseChart(columns, rows, { type: "table", y: ["count"] }))).toContain(
      'chart.y "count" is not a column',
    );
  });

  it("a text column as y is refused, naming the numeric columns", () => {
    expect(refusal(() => chooseChart(columns, rows, { type: "bar", y: ["channel"] }))).toBe(
      'chart.y "channel" is VARCHAR, not a number: y takes numeric columns. Numeric columns: n BIGINT.',
    );
  });

  it("a scatter plot over text, or key figures of many rows, are refused", () => {
    expect(refusal(() => chooseChart(columns, rows, { type: "scatter", x: "channel" }))).toBe(
      'chart.x "channel" is VARCHAR, which a scatter chart cannot place along x. Columns it can: day DATE, n BIGINT.',
    );
    expect(refusal(() => chooseChart(columns, rows, { type: "kpi" }))).toContain(
      "draws an answer of one row; this one has 2",
    );
    expect(
      refusal(() => chooseChart([col("channel", "VARCHAR")], [["sms"]], { type: "bar" })),
    ).toContain("needs a numeric column for y");
  });
});

describe("what a chart draws", () => {
  it("a line's x in time order, each series the numbers of its category", () => {
    const columns = [col("day", "VARCHAR"), col("channel", "VARCHAR"), col("n", "BIGINT")];
    const rows = [
      ["2025-03-02", "sms", 2],
      ["2025-03-01", "sms", 1],
      ["2025-03-01", "kakao", 5],
      ["2025-03-01", "kakao", 9],
      [null, "kakao", 7],
    ];
    const spec = chooseChart(columns, rows);
    const data = plotData(spec, columns, rows);
    expect(data.xs).toEqual(["2025-03-01", "2025-03-02"]);
    expect(data.positions).toEqual({
      kind: "time",
      values: [Date.UTC(2025, 2, 1) / 1000, Date.UTC(2025, 2, 2) / 1000],
    });
    expect(data.series).toEqual([
      { key: "sms", values: [1, 2] },
      { key: "kakao", values: [5, null] },
    ]);
    expect(data.left).toEqual({ categories: 0, series: 0, points: 0, repeats: 1, unplaced: 1 });
  });

  it(`a long category list keeps its ${MAX_CATEGORIES} largest, in the answer's order, and counts the others`, () => {
    const columns = [col("code", "VARCHAR"), col("n", "BIGINT")];
    const rows = Array.from({ length: 40 }, (_, i) => [`E${i}`, i % 2 === 0 ? 100 + i : i]);
    const data = plotData(chooseChart(columns, rows), columns, rows);
    expect(data.xs).toHaveLength(MAX_CATEGORIES);
    expect(data.left.categories).toBe(10);
    // The 20 even codes (100+) and the 10 largest odd ones (21..39), in the answer's order.
    const kept = rows.filter(([, n]) => (n as number) >= 21).map(([c]) => c);
    expect(data.xs).toEqual(kept);
  });

  it(`at most ${MAX_SERIES} series: the largest, the others counted`, () => {
    const columns = [col("day", "DATE"), col("campaign", "VARCHAR"), col("n", "BIGINT")];
    const rows = Array.from({ length: 14 }, (_, i) => ["2025-03-01", `c${i}`, i + 1]);
    const data = plotData(chooseChart(columns, rows), columns, rows);
    expect(data.series.map((s) => s.key)).toEqual(
      Array.from({ length: MAX_SERIES }, (_, i) => `c${i + 4}`),
    );
    expect(data.left.series).toBe(4);
  });

  it(`at most ${MAX_POINTS} points: the first along x, the rest counted`, () => {
    const columns = [col("day", "DATE"), col("sent", "BIGINT"), col("opens", "BIGINT")];
    const rows = days(1500).map((d, i) => [d, i, i % 3 === 0 ? null : 1]);
    const data = plotData(chooseChart(columns, rows), columns, rows);
    const drawn = data.series.flatMap((s) => s.values).filter((v) => v !== null).length;
    expect(drawn).toBeLessThanOrEqual(MAX_POINTS);
    const all = rows.flatMap((r) => [r[1], r[2]]).filter((v) => v !== null).length;
    expect(drawn + data.left.points).toBe(all);
    expect(data.xs).toEqual(days(1500).slice(0, data.xs.length));
    // One more day would pass the cap.
    expect(drawn + (data.xs.length % 3 === 0 ? 1 : 2)).toBeGreaterThan(MAX_POINTS);

    const scatterColumns = [col("sent", "BIGINT"), col("opens", "BIGINT")];
    const points = Array.from({ length: 2600 }, (_, i) => [2600 - i, i]);
    const scatter = plotData(chooseChart(scatterColumns, points), scatterColumns, points);
    expect(scatter.xs).toHaveLength(MAX_POINTS);
    expect(scatter.xs[0]).toBe(1);
    expect(scatter.left.points).toBe(600);
  });

  it("reads times with and without an offset, and nothing else", () => {
    expect(timePosition("2025-03-01 10:00:00")).toBe(Date.UTC(2025, 2, 1, 10) / 1000);
    expect(timePosition("2025-03-01 10:00:00+09")).toBe(Date.UTC(2025, 2, 1, 1) / 1000);
    expect(timePosition("2025-03")).toBe(Date.UTC(2025, 2, 1) / 1000);
    expect(timePosition("2025-13-01")).toBeUndefined();
    expect(timePosition("sms")).toBeUndefined();
    expect(timePosition(20250301)).toBeUndefined();
  });
});
