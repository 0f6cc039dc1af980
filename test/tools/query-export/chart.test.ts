import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, startHarness } from "../../helpers/tool-harness.js";
import { writeCampaignCsv } from "../../report/fixtures.js";

/**
 * query_export's chart: the one the answer's shape calls for, or the one the chart argument asks
 * for, in structuredContent and in one line of the text; a chart that cannot be drawn is an
 * isError naming the answer's columns; tools/list names the view that draws it.
 */

const VIEW_URI = "ui://crm-insights/report.html";

let h: Harness;
let csv: string;

beforeAll(async () => {
  h = await startHarness();
  csv = await writeCampaignCsv(h.dataDir);
}, 60_000);
afterAll(async () => {
  await h.close();
});

const query = (sql: string, chart?: Record<string, unknown>) =>
  h.call("query_export", { files: [csv], sql, ...(chart === undefined ? {} : { chart }) });

describe("query_export's chart", () => {
  it("names the report view in tools/list", async () => {
    const { tools } = await h.client.listTools();
    const tool = tools.find((t) => t.name === "query_export");
    expect(tool?._meta).toEqual({ ui: { resourceUri: VIEW_URI }, "ui/resourceUri": VIEW_URI });
  });

  it("a GROUP BY answer is drawn as bars, said in structuredContent and in the text", async () => {
    const r = await query(
      "SELECT event_role, count(*) AS n FROM events GROUP BY 1 ORDER BY 2 DESC",
    );
    expect(r.isError, r.text).toBeFalsy();
    expect(r.structured.chart).toEqual({
      type: "bar",
      x: "event_role",
      y: ["n"],
      series: null,
      reason: "a category with numbers: a bar per numeric column",
    });
    expect(r.text).toContain(
      "Chart: bar chart of n by event_role (a category with numbers: a bar per numeric column).",
    );
  });

  it("each shape gets its chart: time, two categories, two numbers, one row, text only", async () => {
    const cases = [
      {
        sql: "SELECT date_trunc('hour', captured_at) AS at, count(*) AS n FROM events GROUP BY 1",
        chart: { type: "line", x: "at", y: ["n"], series: null },
      },
      {
        sql: "SELECT task_id, event_role, count(*) AS n FROM events GROUP BY ALL",
        chart: { type: "bar", x: "task_id", y: ["n"], series: "event_role" },
      },
      {
        sql: "SELECT count(*) AS events, count(*) FILTER (WHERE event_role = 'open') AS opens FROM events GROUP BY user_id",
        chart: { type: "scatter", x: "events", y: ["opens"], series: null },
      },
      {
        sql: "SELECT count(*) AS rows, count(DISTINCT user_id) AS users FROM events",
        chart: { type: "kpi", x: null, y: ["rows", "users"], series: null },
      },
      {
        sql: "SELECT task_id, event_type FROM events LIMIT 3",
        chart: { type: "table", x: null, y: [], series: null },
      },
    ];
    for (const c of cases) {
      const r = await query(c.sql);
      expect(r.isError, r.text).toBeFalsy();
      expect(r.structured.chart, c.sql).toMatchObject(c.chart);
    }
  });

  it("draws the chart asked for, its missing parts filled in", async () => {
    const r = await query(
      "SELECT date_trunc('hour', captured_at) AS at, channel, count(*) AS n FROM events GROUP BY ALL",
      { type: "bar", x: "channel" },
    );
    expect(r.isError, r.text).toBeFalsy();
    expect(r.structured.chart).toEqual({
      type: "bar",
      x: "channel",
      y: ["n"],
      series: null,
      reason: "as the chart argument asked",
    });
  });

  it("an unknown column is an error naming the columns there are, with their types", async () => {
    const r = await query("SELECT channel, count(*) AS n FROM events GROUP BY 1", {
      type: "line",
      x: "day",
    });
    expect(r.isError).toBe(true);
    expect(r.text).toContain(
      `invalid input (chart). chart.x "day" is not a column of the answer. The answer's columns: channel VARCHAR, n BIGINT.`,
    );
  });

  it("a text column as y is an error naming the numeric columns", async () => {
    const r = await query("SELECT channel, count(*) AS n FROM events GROUP BY 1", {
      type: "bar",
      x: "n",
      y: ["channel"],
    });
    expect(r.isError).toBe(true);
    expect(r.text).toContain(
      'chart.y "channel" is VARCHAR, not a number: y takes numeric columns. Numeric columns: n BIGINT.',
    );
  });

  it("a chart type the tool does not draw is refused by the input check", async () => {
    const r = await query("SELECT channel, count(*) AS n FROM events GROUP BY 1", { type: "pie" });
    expect(r.isError).toBe(true);
    expect(r.text).toContain("chart.type");
    expect(r.text).toContain("line");
  });
});
