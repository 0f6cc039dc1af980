import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildReport, markCount } from "../../src/report/model.js";
import { campaignRows, toCsv } from "../analysis/campaign/fixture.js";
import {
  ARTIFACTS,
  backgroundColor,
  chartMarks,
  inPage,
  launchBrowser,
  type PageServer,
  servePages,
  watchedPage,
} from "./browser-support.js";
import { measureReadability } from "./readability.js";

/**
 * `crm-insights-mcp query ... --report` pages (the built bin, dist/cli.js) in headless Chromium at
 * 560 px: each shape of answer drawn as its chart (line, stacked and grouped bars, scatter, key
 * figures, the table alone), a mark per value the model draws, the answer's column names in the
 * table, readable in the dark theme, no console error, nothing fetched.
 */

const BIN = join(import.meta.dirname, "../../dist/cli.js");
const run = promisify(execFile);
const TIMEOUT = 120_000;

/** One answer a shape: its SQL, and the chart it must be drawn as. */
const SHAPES = {
  line: "SELECT date_trunc('hour', captured_at) AS at, count(*) AS n FROM events GROUP BY 1",
  stacked: "SELECT task_id, event_role, count(*) AS n FROM events GROUP BY ALL ORDER BY ALL",
  bar: "SELECT event_role, count(*) AS n, count(DISTINCT user_id) AS users FROM events GROUP BY 1 ORDER BY 2 DESC",
  scatter:
    "SELECT count(*) AS events, count(*) FILTER (WHERE event_role = 'open') AS opens FROM events GROUP BY user_id",
  kpi: "SELECT count(*) AS rows, count(DISTINCT user_id) AS users, avg(CASE WHEN event_role = 'open' THEN 1 ELSE 0 END) AS open_rate FROM events",
  table: "SELECT task_id, event_type FROM events ORDER BY ALL LIMIT 5",
} as const;
type Shape = keyof typeof SHAPES;

let dir: string;
let browser: Browser;
let server: PageServer;
const pages = new Map<string, () => string>();
const data = new Map<string, unknown>();

async function writePage(name: string, sql: string, csv: string, lang: "en" | "ko") {
  const out = join(dir, `${name}.html`);
  await run(process.execPath, [BIN, "query", "--sql", sql, csv, "--report", out, "--lang", lang]);
  const html = await readFile(out, "utf8");
  const start = html.indexOf('id="report-data">') + 'id="report-data">'.length;
  data.set(name, JSON.parse(html.slice(start, html.indexOf("</script>", start))));
  pages.set(`/${name}.html`, () => html);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "query-chart-browser-"));
  const csv = join(dir, "campaign.csv");
  await writeFile(csv, toCsv(campaignRows(7, 80)));
  for (const [shape, sql] of Object.entries(SHAPES)) await writePage(shape, sql, csv, "en");
  await writePage("bar-ko", SHAPES.bar, csv, "ko");
  server = await servePages(pages);
  browser = await launchBrowser();
}, TIMEOUT);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

async function open(name: string, colorScheme: "light" | "dark") {
  const context = await browser.newContext({ viewport: { width: 560, height: 1400 }, colorScheme });
  const url = `${server.origin}/${name}.html`;
  const watched = await watchedPage(context, (u) => u === url);
  await watched.page.goto(url);
  await watched.page.waitForSelector("#report[data-state=ready]", { timeout: 30_000 });
  return { ...watched, context, url };
}

/** What the page shows: the chart's type and axis, cards, and the answer table's head and rows. */
function seen(page: Parameters<typeof inPage>[0]) {
  return inPage<{
    type: string | null;
    axis: string | null;
    kpis: string[];
    head: string[];
    rows: number;
  }>(
    page,
    `(() => {
      const chart = document.querySelector("[data-chart=answer]");
      const answer = document.querySelector("#section-answer table");
      return {
        type: chart?.dataset.type ?? null,
        axis: chart?.dataset.axis ?? null,
        kpis: [...document.querySelectorAll(".kpi .label")].map((e) => e.textContent),
        head: [...answer.querySelectorAll("thead th")].map((e) => e.textContent),
        rows: answer.querySelectorAll("tbody tr").length,
      };
    })()`,
  );
}

describe("a query answer's page in Chromium", () => {
  it(
    "each shape is drawn as its chart, a mark per value, the answer's columns in its table",
    async () => {
      const expected: Record<Shape, { type: string | null; axis: string | null }> = {
        line: { type: "line", axis: "time" },
        stacked: { type: "stacked", axis: null },
        bar: { type: "bar", axis: null },
        scatter: { type: "scatter", axis: "number" },
        kpi: { type: null, axis: null },
        table: { type: null, axis: null },
      };
      for (const shape of Object.keys(SHAPES) as Shape[]) {
        const { page, errors, requests, context, url } = await open(shape, "light");
        const answer = data.get(shape) as { columns: Array<{ name: string }>; rows: unknown[] };
        const model = buildReport(answer, "file");
        const charts = model.sections.flatMap((s) => s.charts);
        const view = await seen(page);
        expect({ type: view.type, axis: view.axis }, shape).toEqual(expected[shape]);
        // The page says why, in the words of the model the page builds.
        const why = model.sections[0]?.text[0] ?? "?";
        expect(await page.textContent("#report"), shape).toContain(why);
        expect(view.head, shape).toEqual(answer.columns.map((c) => c.name));
        expect(view.rows, shape).toBe(answer.rows.length);
        expect(await chartMarks(page), shape).toEqual(
          Object.fromEntries(charts.map((c) => [c.id, markCount(c)])),
        );
        if (shape === "line") {
          await page.screenshot({ path: join(ARTIFACTS, "query-chart-line.png"), fullPage: true });
        }
        expect(view.kpis, shape).toEqual(shape === "kpi" ? ["rows", "users", "open_rate"] : []);
        expect(errors, shape).toEqual([]);
        expect(requests, shape).toEqual([url]);
        await context.close();
      }
    },
    TIMEOUT,
  );

  it(
    "a GROUP BY answer in the dark theme: drawn, every text readable, its table a click away",
    async () => {
      const { page, errors, context } = await open("bar", "dark");
      expect(await backgroundColor(page)).toBe("rgb(22, 25, 29)");
      const answer = data.get("bar") as { rows: unknown[][] };
      expect((await chartMarks(page)).answer).toBe(answer.rows.length * 2);
      const readable = await measureReadability(page);
      expect(readable.canvases.map((c) => c.chart)).toEqual(["answer"]);
      for (const c of readable.canvases) {
        expect(c.pixels).toBeGreaterThan(40);
        expect(c.min, `${c.worst} on ${c.background}`).toBeGreaterThanOrEqual(4.5);
      }
      expect(readable.poorText).toEqual([]);
      await page.screenshot({ path: join(ARTIFACTS, "query-chart-bar-dark.png"), fullPage: true });
      // The chart's own table view: one row per category, the counts as the locale writes them.
      await page.click("figure button:text('Table')");
      const first = await page.textContent("[data-table-for=answer] tbody tr");
      const [role, n, users] = answer.rows[0] as [string, number, number];
      expect(first).toBe(`${role}${n.toLocaleString("en-US")}${users.toLocaleString("en-US")}`);
      expect(errors).toEqual([]);
      await context.close();
    },
    TIMEOUT,
  );

  it(
    "in Korean: the page's words, the answer's own column names",
    async () => {
      const { page, errors, context } = await open("bar-ko", "light");
      expect(await page.textContent("h1")).toBe("질의 결과");
      expect(await page.textContent("figure h3")).toBe("event_role별 n, users");
      expect(await page.textContent("figure .views")).toBe("차트표");
      const view = await seen(page);
      expect(view.head).toEqual(["event_role", "n", "users"]);
      expect(errors).toEqual([]);
      await context.close();
    },
    TIMEOUT,
  );
});
