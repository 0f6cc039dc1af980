import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Frame } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { langOfLocale, reportText } from "../../src/report/i18n/index.js";
import { buildReport, markCount } from "../../src/report/model.js";
import { must } from "../helpers/must.js";
import { needs } from "../helpers/needs.js";
import {
  ARTIFACTS,
  BROWSER_TEST_TIMEOUT_MS,
  chartMarks,
  inPage,
  launchBrowser,
  saveScreenshot,
} from "../report/browser-support.js";
import {
  LONG_TASK_IDS,
  SCENARIO_DAYS,
  SCENARIO_NODES,
  writeCampaignCsvWithLongTaskIds,
  writeScenarioXlsx,
} from "../report/fixtures.js";
import { measureReadability } from "../report/readability.js";
import {
  callTool,
  HOST_BACKGROUND,
  type HostSession,
  hostToolResult,
  openHost as openHostPage,
  switchHostTheme,
} from "./host-page.js";
import {
  type McpServer,
  type ReferenceHost,
  startMcpServer,
  startReferenceHost,
} from "./host-server.js";

/**
 * The report view in a host we did not write: the ext-apps project's reference host (its
 * basic-host example and AppBridge, vendored at a pinned commit and built by
 * scripts/build-reference-host.mjs), talking to `serve --http` (the built bin) from the browser
 * on another origin (CORS), in headless Chromium. A person's steps: pick the tool, type its arguments, press Call Tool, switch the
 * host's theme, resize the window. In light and dark and at 1280 and 560 px: every chart has a
 * mark per value of the result the host received, every text reads at 4.5:1 (measured on the
 * canvas and the page), nothing is logged as an error, and a resize keeps a figure's Table view
 * without laying the view out again.
 */

const BIN = new URL("../../dist/cli.js", import.meta.url).pathname;

let dataDir: string;
let server: McpServer | undefined;
let host: ReferenceHost;
let mcpUrl: string;
let browser: Browser;
let campaignCsv: string;
let scenarioXlsx: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "reference-host-data-"));
  // In sandbox mode the tools read files from the data folder's sandbox/ part.
  const files = join(dataDir, "sandbox");
  await mkdir(files, { recursive: true });
  campaignCsv = await writeCampaignCsvWithLongTaskIds(files);
  scenarioXlsx = await writeScenarioXlsx(files);
  host = await startReferenceHost();
  server = await startMcpServer({ bin: BIN, dataDir, allowedOrigin: host.origin });
  mcpUrl = server.url;
  host.setServers([mcpUrl]);
  browser = await launchBrowser();
}, BROWSER_TEST_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await host?.close();
  await server?.close();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
}, BROWSER_TEST_TIMEOUT_MS);

/**
 * The host page at `width` px in `scheme`, the browser in `locale` (Chromium's own en-US unless
 * given), with everything it logs or fails to load recorded.
 */
function openHost(width: number, scheme: "light" | "dark", locale?: string): Promise<HostSession> {
  return openHostPage(browser, host, mcpUrl, {
    width,
    scheme,
    ...(locale === undefined ? {} : { locale }),
  });
}

/** Marks per chart equal the values of the result; every text reads; no legend shows "-". */
async function expectDrawnAndReadable(view: Frame, structured: unknown, label: string) {
  const model = buildReport(structured, "view");
  const charts = model.sections.flatMap((s) => s.charts);
  const expected = Object.fromEntries(charts.map((c) => [c.id, markCount(c)]));
  expect(await chartMarks(view), `${label}: marks per chart`).toEqual(expected);
  const rows = await inPage<Record<string, number>>(
    view,
    `Object.fromEntries([...document.querySelectorAll("[data-table-for]")].map((e) => [e.dataset.tableFor, e.querySelectorAll("tbody tr").length]))`,
  );
  expect(rows).toEqual(Object.fromEntries(charts.map((c) => [c.id, c.categories.length])));

  const seen = await measureReadability(view);
  // A box chart is HTML, its text measured with the page's; the others are canvases.
  const canvases = charts.filter((c) => c.type !== "box");
  expect(seen.canvases.map((c) => c.chart).sort()).toEqual(canvases.map((c) => c.id).sort());
  for (const c of seen.canvases) {
    // Enough label pixels that the labels were drawn, and none of them faint or black-on-dark.
    expect(c.pixels, `${label}: label pixels of ${c.chart}`).toBeGreaterThan(40);
    expect(
      c.min,
      `${label}: ${c.chart}'s labels, ${c.worst} on ${c.background}`,
    ).toBeGreaterThanOrEqual(4.5);
  }
  expect(seen.textElements).toBeGreaterThan(20);
  expect(seen.poorText, `${label}: text below 4.5:1`).toEqual([]);

  const legendValues = await inPage<string[]>(
    view,
    `[...document.querySelectorAll(".u-legend .u-value")].map((e) => e.textContent)`,
  );
  expect(legendValues.length).toBeGreaterThan(0);
  expect(legendValues.filter((v) => v !== null && /^-+$/.test(v.trim()))).toEqual([]);
}

describe("the report view in the ext-apps reference host", {
  ...needs("chromium"),
  timeout: BROWSER_TEST_TIMEOUT_MS,
}, () => {
  // A test per width: each has its own deadline, and a failure names the width. One screenshot
  // of each file is enough to look at.
  for (const { width, screenshot } of [
    { width: 1280, screenshot: undefined },
    { width: 560, screenshot: "reference-host-campaign-560-dark.png" },
  ]) {
    it(`campaign CSV at ${width} px: drawn and readable in light and dark`, async () => {
      const { context, page, problems } = await openHost(width, "light");
      const view = await callTool(page, "summarize_export", { file: campaignCsv });
      const result = await hostToolResult(page);
      const summary = result.structuredContent as {
        rounds: Array<{ group: string }>;
        failures: unknown[];
        delivery: { by_channel: unknown[] };
      };
      // The data behind the marks, straight from the result.
      const marks = await chartMarks(view);
      expect(marks.funnel).toBe(summary.rounds.length * 5);
      expect(marks["opens-by-hour"]).toBe(24);
      expect(marks["failures-by-code"]).toBe(summary.failures.length);
      expect(marks["delivery-by-channel"]).toBe(summary.delivery.by_channel.length * 2);
      await expectDrawnAndReadable(view, result.structuredContent, `campaign ${width} light`);
      // Each round's label, however short the axis makes it, still ends with its group.
      const labels = JSON.parse(
        (await view.getAttribute("[data-chart=funnel]", "data-labels")) ?? "[]",
      ) as string[];
      expect(labels).toHaveLength(summary.rounds.length);
      expect(new Set(labels).size).toBe(labels.length);
      summary.rounds.forEach((r, i) => {
        expect(labels[i]?.endsWith(r.group === "" ? "10:00" : r.group)).toBe(true);
      });
      expect(labels.some((l) => l.includes(LONG_TASK_IDS["task-1"]))).toBe(false);
      // The legend is the tooltip: the hovered round in full, and its values.
      await page
        .frameLocator("iframe")
        .frameLocator("iframe")
        .locator("[data-chart=funnel] .u-over")
        .hover({ position: { x: 20, y: 100 } });
      const hovered = await inPage<string[]>(
        view,
        `[...document.querySelectorAll("[data-chart=funnel] .u-legend .u-value")].map((e) => e.textContent)`,
      );
      // The browser's locale is en-US, and the host sends none: English, dates the US way.
      expect(hovered[0]).toMatch(/^tsk_7814637a2… 3\/1, 10:00 그룹A$/);
      expect(await view.textContent("h1")).toBe("Campaign export: campaign-long-ids.csv");
      expect(hovered.slice(1).every((v) => typeof v === "string" && /^\d[\d,]*$/.test(v))).toBe(
        true,
      );

      await switchHostTheme(page, view, "dark");
      await expectDrawnAndReadable(view, result.structuredContent, `campaign ${width} dark`);
      if (screenshot !== undefined) await saveScreenshot(page, screenshot);
      expect(problems).toEqual([]);
      await context.close();
    });
  }

  for (const { width, screenshot } of [
    { width: 560, screenshot: undefined },
    { width: 1280, screenshot: "reference-host-scenario-1280-light.png" },
  ]) {
    it(`scenario XLSX at ${width} px: a line per node and day, in dark and then light`, async () => {
      const { context, page, problems } = await openHost(width, "dark");
      const view = await callTool(page, "summarize_export", { file: scenarioXlsx });
      expect(await inPage(view, "getComputedStyle(document.body).backgroundColor")).toBe(
        HOST_BACKGROUND.dark,
      );
      const result = await hostToolResult(page);
      const marks = await chartMarks(view);
      expect(marks["daily-sends"]).toBe(SCENARIO_NODES.length * SCENARIO_DAYS);
      await expectDrawnAndReadable(view, result.structuredContent, `scenario ${width} dark`);
      await switchHostTheme(page, view, "light");
      await expectDrawnAndReadable(view, result.structuredContent, `scenario ${width} light`);
      if (screenshot !== undefined) await saveScreenshot(page, screenshot);
      expect(problems).toEqual([]);
      await context.close();
    });
  }

  it("a person whose browser is in ko-KR reads the view in Korean", async () => {
    // The reference host puts no locale in its host context; the view then follows the browser's
    // language (navigator.language), which is the host page's own.
    const { context, page, problems } = await openHost(1280, "light", "ko-KR");
    const view = await callTool(page, "summarize_export", { file: campaignCsv });
    const result = await hostToolResult(page);
    const seen = await inPage<{ lang: string; h1: string; h2: string[]; buttons: string[] }>(
      view,
      `({
        lang: document.documentElement.lang,
        h1: document.querySelector("h1").textContent,
        h2: [...document.querySelectorAll("h2")].map((e) => e.textContent),
        buttons: [...document.querySelectorAll("figure:has([data-chart=funnel]) .views button")].map((e) => e.textContent),
      })`,
    );
    expect(seen).toEqual({
      lang: "ko",
      h1: "캠페인 내보내기: campaign-long-ids.csv",
      h2: ["발송 퍼널", "A/B 테스트", "오픈 시간대", "발송 실패"],
      buttons: ["차트", "표"],
    });
    const verdicts = await inPage<string[]>(
      view,
      `[...document.querySelectorAll("#section-ab .table-wrap:not([hidden]) tbody tr")].map((r) => r.lastElementChild.textContent)`,
    );
    expect(verdicts.length).toBeGreaterThan(0);
    for (const v of verdicts) expect(v).toMatch(/^유의(함|하지 않음) \(95% 신뢰수준\)$/);
    await expectDrawnAndReadable(view, result.structuredContent, "campaign ko-KR 1280 light");
    await saveScreenshot(page, "reference-host-campaign-1280-ko.png");
    expect(problems).toEqual([]);
    await context.close();
  });

  it("campaign_metrics at 560 px: campaigns ranked and rounds over time", async () => {
    const { context, page, problems } = await openHost(560, "light");
    const args = { task_from: "2026-09-01", task_to: "2026-11-21", include_tasks: true, top_n: 8 };
    const view = await callTool(page, "campaign_metrics", args);
    const result = await hostToolResult(page);
    const data = result.structuredContent as { campaigns: unknown[]; tasks: unknown[] };
    expect(data.campaigns.length).toBeGreaterThan(1);
    const marks = await chartMarks(view);
    expect(marks["campaign-volume"]).toBe(data.campaigns.length * 2);
    expect(marks["rounds-over-time"]).toBe(Math.min(60, data.tasks.length) * 3);
    await expectDrawnAndReadable(view, result.structuredContent, "campaign_metrics 560 light");
    expect(problems).toEqual([]);
    await context.close();
  });

  // The change against the previous period leads the view: what the table shows, read in the
  // view's frame, against the model of the result the host received; both arrows with their
  // signs; nothing scrolls sideways at 560 px; every text reads, in light and then dark.
  for (const locale of ["en-US", "ko-KR"]) {
    it(`campaign_metrics with compare_to at 560 px (${locale}): the change table, light and dark`, async () => {
      const { context, page, problems } = await openHost(560, "light", locale);
      // A window whose counts rose and rates fell against the one before it.
      const args = {
        task_from: "2026-10-15",
        task_to: "2026-11-15",
        compare_to: "previous_period",
      };
      const view = await callTool(page, "campaign_metrics", args);
      const result = await hostToolResult(page);
      const data = result.structuredContent as {
        comparison: { task_from: string; change: Record<string, { delta: number | null }> };
      };
      // 32 days (task_to is a whole day), so the 32 days before: Sep 13 to Oct 14.
      expect(data.comparison.task_from).toBe("2026-09-13T00:00:00+09:00");
      const t = reportText(langOfLocale(locale), locale);
      const table = buildReport(result.structuredContent, "view", t).sections[0]?.tables[0];
      if (table === undefined) throw new Error("the model has no comparison table");
      const shown = () =>
        inPage<{ first: string; h2: string; caption: string; head: string[]; rows: string[][] }>(
          view,
          `(() => {
            const s = document.getElementById("section-comparison");
            return {
              first: document.querySelector("#report section").id,
              h2: s.querySelector("h2").textContent,
              caption: s.querySelector("caption").textContent,
              head: [...s.querySelectorAll("thead th")].map((e) => e.textContent),
              rows: [...s.querySelectorAll("tbody tr")].map((r) => [...r.cells].map((c) => c.textContent)),
            };
          })()`,
        );
      const seen = await shown();
      expect(seen).toEqual({
        first: "section-comparison",
        h2: t.m.metrics.against.previous_period,
        caption: table.caption,
        head: table.columns,
        rows: table.rows,
      });
      expect(seen.caption).toContain(
        locale === "en-US" ? "Sep 13, 2026 – Oct 14, 2026" : "2026. 9. 13. ~ 2026. 10. 14.",
      );
      // Each rise with ▲ and +, each fall with ▼ and −, as the result's deltas go.
      const deltas = [
        "sent_count",
        "received_count",
        "open_count",
        "click_count",
        "purchase_count",
        "computed_open_rate",
        "computed_click_rate",
        "computed_conversion_rate",
      ].map((k) => Math.sign(data.comparison.change[k]?.delta ?? 0));
      expect(deltas).toContain(1);
      expect(deltas).toContain(-1);
      expect(seen.rows.slice(0, 8).map((r) => must(r[3], "a change cell").slice(0, 3))).toEqual(
        deltas.map((d) => (d > 0 ? "▲ +" : d < 0 ? "▼ −" : t.m.metrics.noChange.slice(0, 3))),
      );
      const unit = locale === "en-US" ? " pp" : "%p";
      expect(seen.rows.slice(5, 8).every((r) => must(r[3], "a change cell").endsWith(unit))).toBe(
        true,
      );
      const sideways = () =>
        inPage<{ page: boolean; table: boolean }>(
          view,
          `({
            page: document.documentElement.scrollWidth > document.documentElement.clientWidth,
            table: (() => {
              const w = document.querySelector("#section-comparison .table-wrap");
              return w.scrollWidth > w.clientWidth;
            })(),
          })`,
        );
      expect(await sideways()).toEqual({ page: false, table: false });
      await expectDrawnAndReadable(view, result.structuredContent, `compare_to ${locale} light`);

      await switchHostTheme(page, view, "dark");
      expect(await shown()).toEqual(seen);
      expect(await sideways()).toEqual({ page: false, table: false });
      await expectDrawnAndReadable(view, result.structuredContent, `compare_to ${locale} dark`);
      await page
        .frameLocator("iframe")
        .frameLocator("iframe")
        .locator("#section-comparison")
        .screenshot({ path: join(ARTIFACTS, `reference-host-comparison-560-${locale}-dark.png`) });
      expect(problems).toEqual([]);
      await context.close();
    });
  }

  it("a resize fits the charts and keeps a figure's Table view; the view is not laid out again", async () => {
    const { context, page, problems } = await openHost(1280, "light");
    const view = await callTool(page, "summarize_export", { file: campaignCsv });
    const frame = page.frameLocator("iframe").frameLocator("iframe");
    await frame
      .locator("figure:has([data-chart=funnel]) .views button", { hasText: "Table" })
      .click();
    // Messages the view receives from now on, and a mark that a reload of its document would lose.
    await inPage(
      view,
      `window.seenContextChanges = [];
       window.addEventListener("message", (e) => {
         if (e.data?.method === "ui/notifications/host-context-changed") window.seenContextChanges.push(e.data.params);
       });
       window.sameDocument = true;`,
    );
    const before = await inPage<{ renders: string; width: number }>(
      view,
      `({ renders: document.getElementById("report").dataset.renders, width: document.querySelector("[data-chart=opens-by-hour] canvas").getBoundingClientRect().width })`,
    );
    await page.setViewportSize({ width: 560, height: 1400 });
    await view.waitForFunction(
      `window.seenContextChanges.some((p) => p.containerDimensions !== undefined && p.theme === undefined)`,
    );
    await view.waitForFunction(
      `document.querySelector("[data-chart=opens-by-hour] canvas").getBoundingClientRect().width < ${before.width - 100}`,
    );
    const after = await inPage<{
      same: boolean;
      renders: string;
      tableShown: boolean;
      chartHidden: boolean;
      pressed: string | null;
    }>(
      view,
      `(() => {
        const fig = document.querySelector("[data-chart=funnel]").closest("figure");
        return {
          same: window.sameDocument === true,
          renders: document.getElementById("report").dataset.renders,
          tableShown: !fig.querySelector("[data-table-for]").hidden,
          chartHidden: fig.querySelector(".chart").hidden,
          pressed: [...fig.querySelectorAll(".views button")].find((b) => b.textContent === "Table").getAttribute("aria-pressed"),
        };
      })()`,
    );
    expect(after).toEqual({
      same: true,
      renders: before.renders,
      tableShown: true,
      chartHidden: true,
      pressed: "true",
    });
    // Back to the chart: drawn at the width the figure has now.
    await frame
      .locator("figure:has([data-chart=funnel]) .views button", { hasText: "Chart" })
      .click();
    const fitted = await inPage<{ canvas: number; figure: number }>(
      view,
      `(() => {
        const box = document.querySelector("[data-chart=funnel]");
        return { canvas: box.querySelector("canvas").getBoundingClientRect().width, figure: box.getBoundingClientRect().width };
      })()`,
    );
    expect(Math.abs(fitted.canvas - fitted.figure)).toBeLessThan(2);
    // A theme change paints again in place: the layout and the other figures' choices stay.
    await frame
      .locator("figure:has([data-chart=opens-by-hour]) .views button", { hasText: "Table" })
      .click();
    await switchHostTheme(page, view, "dark");
    const themed = await inPage<{ same: boolean; renders: string; table: boolean }>(
      view,
      `({
        same: window.sameDocument === true,
        renders: document.getElementById("report").dataset.renders,
        table: !document.querySelector("[data-table-for=opens-by-hour]").hidden,
      })`,
    );
    expect(themed).toEqual({ same: true, renders: before.renders, table: true });
    expect(problems).toEqual([]);
    await context.close();
  });
});
