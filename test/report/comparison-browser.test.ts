import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { summarizeFile } from "../../src/analysis/index.js";
import type { Baseline } from "../../src/report/baseline-section.js";
import { reportHtmlWithData } from "../../src/report/html.js";
import { type Lang, reportText } from "../../src/report/i18n/index.js";
import { buildReport, chartTable } from "../../src/report/model.js";
import { must } from "../helpers/must.js";
import { needs } from "../helpers/needs.js";
import { type Harness, startHarness } from "../helpers/tool-harness.js";
import {
  ARTIFACTS,
  BROWSER_TEST_TIMEOUT_MS,
  inPage,
  launchBrowser,
  openContext,
  type PageServer,
  servePages,
  watchedPage,
} from "./browser-support.js";
import { writeCampaignCsv } from "./fixtures.js";
import { measureReadability } from "./readability.js";
import { dataWords, englishWords, pageText } from "./visible-text.js";

// Reads the built page, `dist/report/view.html`, so it runs after the build (vitest.config.ts).

/**
 * The HTML report of the two comparisons, at 560 px in headless Chromium, in English and Korean,
 * light and dark: campaign_metrics with compare_to (a real call on the sandbox) as a table whose
 * change cells carry an arrow and a sign, and a campaign CSV summary with a baseline as a box per
 * rate with the campaign's dot where its value puts it. What is asserted is what shows: the
 * text, the places of box, median and dot, no sideways scroll, every text at 4.5:1. The same page
 * as the MCP App view in the minimal host (host.html) writes both again in Korean when the host's
 * locale turns, without laying them out again.
 */

const WIDTH = 560;
let h: Harness;
let dir: string;
let browser: Browser;
let server: PageServer;
let metrics: Record<string, unknown>;
let summary: Record<string, unknown>;
/** The view as the server serves it (no data in it). */
let view: string;
const pages = new Map<string, () => string>();

const BASELINE: Baseline = {
  channel: "app_push",
  campaigns: 12,
  window: { from: "2026-06-02", to: "2026-10-28" },
  metrics: {
    delivery: { value: 0.97, median: 0.95, p25: 0.93, p75: 0.96, flag: null },
    open: { value: 0.31, median: 0.18, p25: 0.15, p75: 0.21, flag: "above" },
    click: { value: 0.004, median: 0.03, p25: 0.025, p75: 0.036, flag: "below" },
    conversion: { value: 0.065, median: 0.07, p25: 0.05, p75: 0.08, flag: null },
    failure: { value: 0.03, median: 0.05, p25: 0.04, p75: 0.07, flag: null },
  },
};

const CASES: Array<{ lang: Lang; scheme: "light" | "dark" }> = [
  { lang: "en", scheme: "light" },
  { lang: "en", scheme: "dark" },
  { lang: "ko", scheme: "light" },
  { lang: "ko", scheme: "dark" },
];

beforeAll(async () => {
  h = await startHarness();
  const result = await h.call("campaign_metrics", {
    task_from: "2026-10-01",
    task_to: "2026-11-01",
    top_n: 5,
    compare_to: "previous_period",
  });
  metrics = result.structured;
  dir = await mkdtemp(join(tmpdir(), "report-comparison-browser-"));
  const c = await summarizeFile(await writeCampaignCsv(dir));
  summary = { ...c, baseline: BASELINE };
  view = await readFile(new URL("../../dist/report/view.html", import.meta.url), "utf8");
  for (const lang of ["en", "ko"] as const) {
    const m = await reportHtmlWithData(metrics, lang);
    const s = await reportHtmlWithData(summary, lang);
    pages.set(`/metrics-${lang}.html`, () => m);
    pages.set(`/baseline-${lang}.html`, () => s);
  }
  const hostHtml = await readFile(join(import.meta.dirname, "host.html"), "utf8");
  pages.set("/host.html", () => hostHtml);
  server = await servePages(pages);
  browser = await launchBrowser();
}, BROWSER_TEST_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await h?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

async function open(path: string, scheme: "light" | "dark") {
  const context = await openContext(browser, {
    viewport: { width: WIDTH, height: 1000 },
    colorScheme: scheme,
  });
  const url = `${server.origin}${path}`;
  const watched = await watchedPage(context, (u) => u === url);
  await watched.page.goto(url);
  await watched.page.waitForSelector("#report[data-state=ready]");
  return { ...watched, context };
}

/**
 * Whether the page, or a table box or chart within `within`, scrolls sideways. (The campaigns'
 * table, eight columns wide, scrolls in its box on a narrow page by design.)
 */
function overflow(page: Page, within: string): Promise<{ page: boolean; tables: string[] }> {
  return inPage(
    page,
    `({
      page: document.documentElement.scrollWidth > document.documentElement.clientWidth,
      tables: [...document.querySelectorAll(${JSON.stringify(within)} + " :is(.table-wrap, .chart)")]
        .filter((e) => e.getClientRects().length > 0 && e.scrollWidth > e.clientWidth)
        .map((e) => e.id || e.dataset.chart || e.className),
    })`,
  );
}

describe("the comparisons in the HTML report, at 560 px", {
  ...needs("chromium"),
  timeout: BROWSER_TEST_TIMEOUT_MS,
}, () => {
  for (const { lang, scheme } of CASES) {
    it(`campaign_metrics with compare_to, ${lang} ${scheme}: the change table as the model says`, async () => {
      const { page, errors, context } = await open(`/metrics-${lang}.html`, scheme);
      const within = "#section-comparison";
      const t = reportText(lang);
      const model = buildReport(metrics, "file", t);
      const table = model.sections[0]?.tables[0];
      if (table === undefined) throw new Error("the model has no comparison table");
      const seen = await inPage<{
        h2: string;
        caption: string;
        head: string[];
        rows: string[][];
        classes: string[];
      }>(
        page,
        `(() => {
          const s = document.getElementById("section-comparison");
          return {
            h2: s.querySelector("h2").textContent,
            caption: s.querySelector("caption").textContent,
            head: [...s.querySelectorAll("thead th")].map((e) => e.textContent),
            rows: [...s.querySelectorAll("tbody tr")].map((r) => [...r.cells].map((c) => c.textContent)),
            classes: [...s.querySelectorAll("tbody tr")].map((r) => r.cells[3].className),
          };
        })()`,
      );
      // The comparison leads the page, right under the key figures.
      expect(await page.textContent("#report section h2")).toBe(seen.h2);
      expect(seen.h2).toBe(t.m.metrics.against.previous_period);
      expect(seen.caption).toBe(table.caption);
      expect(seen.caption).toContain(
        lang === "en" ? "Aug 30, 2026 – Sep 30, 2026" : "2026. 8. 30. ~ 2026. 9. 30.",
      );
      expect(seen.head).toEqual(table.columns);
      expect(seen.rows).toEqual(table.rows);
      // The sandbox's two windows differ both ways: both arrows show, each with its sign.
      const changes = seen.rows.map((r) => must(r[3], "a change cell"));
      expect(changes.some((c) => /^▲ \+/.test(c))).toBe(true);
      expect(changes.some((c) => /^▼ −/.test(c))).toBe(true);
      const unit = lang === "en" ? " pp" : "%p";
      expect(changes.filter((c) => c.endsWith(unit))).toHaveLength(3);
      // The colour follows the arrow: ▲ better, ▼ worse (cost has none).
      expect(seen.classes).toEqual(
        table.tones?.map((r) => ["num", r[3] === null ? "" : `tone-${r[3]}`].join(" ").trim()),
      );
      const colors = await inPage<{ better: string; worse: string; plain: string }>(
        page,
        `({
          better: getComputedStyle(document.querySelector("td.tone-better")).color,
          worse: getComputedStyle(document.querySelector("td.tone-worse")).color,
          plain: getComputedStyle(document.querySelector("#section-comparison td")).color,
        })`,
      );
      expect(new Set(Object.values(colors)).size).toBe(3);
      expect(await overflow(page, within)).toEqual({ page: false, tables: [] });
      const read = await measureReadability(page);
      expect(read.poorText).toEqual([]);
      await page
        .locator(within)
        .screenshot({ path: join(ARTIFACTS, `report-comparison-560-${lang}-${scheme}.png`) });
      expect(errors).toEqual([]);
      await context.close();
    });
  }

  for (const { lang, scheme } of CASES) {
    it(`campaign CSV with a baseline, ${lang} ${scheme}: a box per rate, the dot where its value is`, async () => {
      const { page, errors, context } = await open(`/baseline-${lang}.html`, scheme);
      const within = "#section-baseline";
      const t = reportText(lang);
      const model = buildReport(summary, "file", t);
      const section = model.sections.find((s) => s.id === "baseline");
      const chart = section?.charts[0];
      if (section === undefined || chart === undefined) throw new Error("no baseline in the model");
      expect(await page.textContent("#section-baseline h2")).toBe(t.m.baseline.section);
      // The flagged rates said in words, above the chart.
      const lines = await inPage<string[]>(
        page,
        `[...document.querySelectorAll("#section-baseline > p.muted")].map((p) => p.textContent)`,
      );
      expect(lines).toEqual(section.text);
      expect(lines).toHaveLength(2);
      const rows = await inPage<
        Array<{
          head: string;
          flag: string | null;
          box: [number, number] | null;
          median: number | null;
          dot: number | null;
          ticks: string[];
        }>
      >(
        page,
        `[...document.querySelectorAll("[data-chart=baseline-rates] .box-row")].map((row) => {
          const x = (sel) => {
            const e = row.querySelector(sel);
            if (e === null) return null;
            const r = e.getBoundingClientRect();
            return (r.left + r.right) / 2;
          };
          const box = row.querySelector(".box-iqr")?.getBoundingClientRect();
          return {
            head: row.querySelector(".box-head").textContent,
            flag: row.querySelector(".box-flag")?.textContent ?? null,
            box: box === undefined ? null : [box.left, box.right],
            median: x(".box-median"),
            dot: x(".box-dot"),
            ticks: [...row.querySelectorAll(".box-tick")].map((e) => e.textContent),
          };
        })`,
      );
      const b = t.m.baseline;
      const pct = (v: number | null | undefined) => t.f.value(v, "percent");
      expect(rows.map((r) => r.head)).toEqual(
        chart.categories.map((name, i) => {
          const flag = chart.flags?.[i];
          const word = flag === "above" ? `▲ ${b.above}` : flag === "below" ? `▼ ${b.below}` : "";
          return `${name}${pct(chart.series[0]?.values[i])}${b.median} ${pct(chart.series[1]?.values[i])}${word}`;
        }),
      );
      expect(rows.map((r) => r.flag)).toEqual([null, `▲ ${b.above}`, `▼ ${b.below}`, null, null]);
      // Where the dot stands against the box and the median, as the figures say.
      const place = rows.map((r) => {
        if (r.box === null || r.dot === null || r.median === null) return "missing";
        const inside = r.median > r.box[0] && r.median < r.box[1];
        const dot =
          r.dot > r.box[1]
            ? "right of the box"
            : r.dot < r.box[0]
              ? "left of the box"
              : "in the box";
        return `${dot}, median ${inside ? "inside" : "outside"}; dot ${r.dot > r.median ? "right" : "left"} of the median`;
      });
      expect(place).toEqual([
        "right of the box, median inside; dot right of the median",
        "right of the box, median inside; dot right of the median",
        "left of the box, median inside; dot left of the median",
        "in the box, median inside; dot left of the median",
        "left of the box, median inside; dot left of the median",
      ]);
      // Each row's axis is in percent, from its low end to its high end.
      for (const r of rows) {
        expect(r.ticks.length).toBeGreaterThanOrEqual(2);
        for (const tick of r.ticks) expect(tick).toMatch(/^\d+(\.\d)?%$/);
      }
      expect(await page.getAttribute("[data-chart=baseline-rates]", "data-marks")).toBe("5");
      expect(await page.getAttribute("[data-chart=baseline-rates]", "role")).toBe("img");
      expect(await page.getAttribute("[data-chart=baseline-rates]", "aria-label")).toBe(
        t.m.page.chartLabel(chart.title),
      );
      expect(await page.textContent("figure:has([data-chart=baseline-rates]) .note")).toBe(
        chart.note,
      );
      expect(await overflow(page, within)).toEqual({ page: false, tables: [] });
      const read = await measureReadability(page);
      expect(read.poorText).toEqual([]);
      await page
        .locator(within)
        .screenshot({ path: join(ARTIFACTS, `report-baseline-560-${lang}-${scheme}.png`) });
      // The text alternative: the table view, with the range in words.
      await page.click(
        `figure:has([data-chart=baseline-rates]) .views button:text("${t.m.page.table}")`,
      );
      const cells = await inPage<string[][]>(
        page,
        `[...document.querySelectorAll("[data-table-for=baseline-rates] tbody tr")].map((tr) => [...tr.cells].map((c) => c.textContent))`,
      );
      expect(cells).toEqual(chartTable(chart, t).rows);
      expect(await overflow(page, within)).toEqual({ page: false, tables: [] });
      expect(errors).toEqual([]);
      await context.close();
    });
  }

  it("the Korean pages show no English word but the data's and code names", async () => {
    // Command, tool and field names the catalogue quotes, the A/B arms, p and z, and US$.
    const codeNames = [
      ...["crm-insights-mcp", "summarize", "json", "campaign_metrics", "include_tasks", "true"],
      ...["top_n", "ID", "_id", "A", "B", "p", "z", "US"],
    ];
    for (const [path, data] of [
      ["/metrics-ko.html", metrics],
      ["/baseline-ko.html", summary],
    ] as const) {
      const { page, errors, context } = await open(path, "light");
      const allowed = [...codeNames, ...dataWords(data)];
      const english = (await pageText(page))
        .map((text) => [text, englishWords(text, allowed)] as const)
        .filter(([, words]) => words.length > 0);
      expect(english, path).toEqual([]);
      expect(errors).toEqual([]);
      await context.close();
    }
  });
  it("in an MCP Apps host's 560 px frame, a change of locale writes both again in place", async () => {
    const context = await openContext(browser, { viewport: { width: 800, height: 1200 } });
    const hostUrl = `${server.origin}/host.html`;
    const { page, errors } = await watchedPage(
      context,
      (u) => u === hostUrl || u === "about:srcdoc",
    );
    await page.goto(hostUrl);
    await inPage(page, `document.getElementById("view").style.width = "${WIDTH}px"`);
    const frames: Array<{ data: unknown }> = [{ data: metrics }, { data: summary }];
    for (const { data } of frames) {
      const result = { content: [{ type: "text", text: "result" }], structuredContent: data };
      await inPage(
        page,
        `startHost(${JSON.stringify(view)}, {}, ${JSON.stringify(result)}, "dark", { locale: "en-US" })`,
      );
      const frame = page.frameLocator("#view");
      await frame.locator("#report[data-state=ready]").waitFor();
      const child = page.frames().find((f) => f !== page.mainFrame());
      if (child === undefined) throw new Error("the view's frame did not load");
      const words = () =>
        inPage<{ renders: string; h2: string[]; cells: string[]; rows: string[] }>(
          child,
          `({
            renders: document.getElementById("report").dataset.renders,
            h2: [...document.querySelectorAll("h2")].map((e) => e.textContent),
            cells: [...document.querySelectorAll("#section-comparison tbody td:last-child")].map((e) => e.textContent),
            rows: [...document.querySelectorAll(".box-row .box-name")].map((e) => e.textContent),
          })`,
        );
      const before = await words();
      await inPage(page, `sendContext({ locale: "ko-KR" })`);
      await child.waitForFunction(`document.documentElement.lang === "ko"`);
      const after = await words();
      const ko = buildReport(data, "view", reportText("ko", "ko-KR"));
      const en = buildReport(data, "view", reportText("en", "en-US"));
      expect(before.h2.slice(0, 2)).toEqual(en.sections.slice(0, 2).map((x) => x.title));
      expect(after.h2.slice(0, 2)).toEqual(ko.sections.slice(0, 2).map((x) => x.title));
      // Written again, not laid out again.
      expect(after.renders).toBe(before.renders);
      const changes = ko.sections.find((x) => x.id === "comparison")?.tables[0];
      expect(after.cells).toEqual(changes?.rows.map((r) => r[3]) ?? []);
      const box = ko.sections.find((x) => x.id === "baseline")?.charts[0];
      expect(after.rows).toEqual(box?.categories ?? []);
      // Each result shows one of the two: the change table or the boxes.
      expect(after.cells.length + after.rows.length).toBeGreaterThan(0);
      const sideways = await inPage<boolean>(
        child,
        "document.documentElement.scrollWidth > document.documentElement.clientWidth",
      );
      expect(sideways).toBe(false);
      expect((await measureReadability(child)).poorText).toEqual([]);
      // The next result is hosted afresh.
      await page.goto(hostUrl);
      await inPage(page, `document.getElementById("view").style.width = "${WIDTH}px"`);
    }
    expect(errors).toEqual([]);
    await context.close();
  });
});
