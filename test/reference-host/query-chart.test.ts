import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Frame } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildReport, markCount } from "../../src/report/model.js";
import { needs } from "../helpers/needs.js";
import { ARTIFACTS, chartMarks, inPage, launchBrowser } from "../report/browser-support.js";
import { writeCampaignCsv } from "../report/fixtures.js";
import { measureReadability } from "../report/readability.js";
import { callTool, HOST_BACKGROUND, hostToolResult, openHost } from "./host-page.js";
import {
  type McpServer,
  type ReferenceHost,
  startMcpServer,
  startReferenceHost,
} from "./host-server.js";

/**
 * query_export's answers drawn by the report view in the ext-apps reference host (vendored,
 * built by scripts/build-reference-host.mjs), calling `serve --http` (the built bin,
 * dist/cli.js) from the browser, at 560 px: a GROUP BY answer as bars with a mark per value,
 * readable in the dark theme, and each shape of answer as its chart, with no console error.
 */

const BIN = new URL("../../dist/cli.js", import.meta.url).pathname;
const CHROMIUM = needs("chromium");
const HAS_BROWSER = !CHROMIUM.skip;
const TIMEOUT = 120_000;

let dataDir: string;
let server: McpServer | undefined;
let host: ReferenceHost;
let mcpUrl: string;
let browser: Browser;
let csv: string;

beforeAll(async () => {
  if (!HAS_BROWSER) return;
  dataDir = await mkdtemp(join(tmpdir(), "reference-host-query-"));
  // In sandbox mode the tools read files from the data folder's sandbox/ part.
  const files = join(dataDir, "sandbox");
  await mkdir(files, { recursive: true });
  csv = await writeCampaignCsv(files);
  host = await startReferenceHost();
  server = await startMcpServer({ bin: BIN, dataDir, allowedOrigin: host.origin });
  mcpUrl = server.url;
  host.setServers([mcpUrl]);
  await mkdir(ARTIFACTS, { recursive: true });
  browser = await launchBrowser();
}, TIMEOUT);

afterAll(async () => {
  await browser?.close();
  await host?.close();
  await server?.close();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
}, 30_000);

/**
 * The host page at `width` px in `scheme`, a query_export call typed in and sent as a person
 * does; resolves with the view's frame once it has drawn, the result the host shows, and every
 * problem logged (console errors and warnings, failed or outside requests).
 */
async function callInHost(width: number, scheme: "light" | "dark", args: Record<string, unknown>) {
  const { context, page, problems } = await openHost(browser, host, mcpUrl, { width, scheme });
  const view = await callTool(page, "query_export", args);
  return {
    context,
    page,
    view,
    problems,
    structured: (await hostToolResult(page)).structuredContent,
  };
}

/** The drawn chart's type and the key-figure cards, as the view shows them. */
function drawn(view: Frame) {
  return inPage<{ type: string | null; kpis: number; head: string[] }>(
    view,
    `({
      type: document.querySelector("[data-chart=answer]")?.dataset.type ?? null,
      kpis: document.querySelectorAll(".kpi").length,
      head: [...document.querySelectorAll("#section-answer thead th")].map((e) => e.textContent),
    })`,
  );
}

describe("query answers in the ext-apps reference host", CHROMIUM, () => {
  it(
    "a GROUP BY answer at 560 px in the dark theme: bars, a mark per value, readable",
    async () => {
      const sql =
        "SELECT event_role, count(*) AS n, count(DISTINCT user_id) AS users FROM events GROUP BY 1 ORDER BY 2 DESC";
      const { context, page, view, problems, structured } = await callInHost(560, "dark", {
        files: [csv],
        sql,
      });
      expect(await inPage(view, "getComputedStyle(document.body).backgroundColor")).toBe(
        HOST_BACKGROUND.dark,
      );
      const data = structured as { rows: unknown[]; chart: { type: string } };
      expect(data.chart.type).toBe("bar");
      expect(await drawn(view)).toEqual({
        type: "bar",
        kpis: 0,
        head: ["event_role", "n", "users"],
      });
      // The statement comes with the call's arguments, not the result: the view shows it.
      expect(await view.textContent("#section-answer caption")).toBe(`SQL: ${sql}`);
      const model = buildReport(structured, "view");
      const chart = model.sections.flatMap((s) => s.charts)[0];
      if (chart === undefined) throw new Error("the model draws no chart");
      expect(markCount(chart)).toBe(data.rows.length * 2);
      expect(await chartMarks(view)).toEqual({ answer: markCount(chart) });
      const seen = await measureReadability(view);
      expect(seen.canvases.map((c) => c.chart)).toEqual(["answer"]);
      for (const c of seen.canvases) {
        expect(c.pixels).toBeGreaterThan(40);
        expect(c.min, `${c.worst} on ${c.background}`).toBeGreaterThanOrEqual(4.5);
      }
      expect(seen.poorText).toEqual([]);
      await page.screenshot({
        path: join(ARTIFACTS, "reference-host-query-560-dark.png"),
        fullPage: true,
      });
      expect(problems).toEqual([]);
      await context.close();
    },
    TIMEOUT,
  );

  it(
    "each shape in the view: a line over time, key figures, the table alone, a chart asked for",
    async () => {
      const cases = [
        {
          args: {
            sql: "SELECT date_trunc('hour', captured_at) AS at, channel, count(*) AS n FROM events GROUP BY ALL",
          },
          seen: { type: "line", kpis: 0, head: ["at", "channel", "n"] },
        },
        {
          args: { sql: "SELECT count(*) AS rows, count(DISTINCT user_id) AS users FROM events" },
          seen: { type: null, kpis: 2, head: ["rows", "users"] },
        },
        {
          args: { sql: "SELECT task_id, event_type FROM events LIMIT 3" },
          seen: { type: null, kpis: 0, head: ["task_id", "event_type"] },
        },
        {
          args: {
            sql: "SELECT date_trunc('hour', captured_at) AS at, channel, count(*) AS n FROM events GROUP BY ALL",
            chart: { type: "bar", x: "at", y: ["n"], series: "channel" },
          },
          seen: { type: "stacked", kpis: 0, head: ["at", "channel", "n"] },
        },
      ];
      for (const c of cases) {
        const { context, view, problems, structured } = await callInHost(560, "light", {
          files: [csv],
          ...c.args,
        });
        expect(await drawn(view), c.args.sql).toEqual(c.seen);
        const model = buildReport(structured, "view");
        const charts = model.sections.flatMap((s) => s.charts);
        expect(await chartMarks(view)).toEqual(
          Object.fromEntries(charts.map((ch) => [ch.id, markCount(ch)])),
        );
        expect(problems, c.args.sql).toEqual([]);
        await context.close();
      }
    },
    TIMEOUT * 2,
  );
});
