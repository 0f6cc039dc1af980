import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { summarizeFile } from "../../src/analysis/index.js";
import type { CampaignSummary, ScenarioSummary } from "../../src/analysis/schemas.js";
import { needs } from "../helpers/needs.js";
import {
  BROWSER_TEST_TIMEOUT_MS,
  backgroundColor,
  chartMarks,
  inkedPixels,
  inPage,
  launchBrowser,
  openContext,
  type PageServer,
  saveScreenshot,
  servePages,
  watchedPage,
} from "./browser-support.js";
import {
  SCENARIO_DAYS,
  SCENARIO_NODES,
  writeCampaignCsv,
  writeManyRoundsCsv,
  writeScenarioXlsx,
} from "./fixtures.js";

/**
 * `crm-insights-mcp report FILE --out PATH.html` (the built bin) on known files, opened in
 * headless Chromium: every chart drawn with the marks its data calls for, a table behind every
 * chart, both themes, nothing fetched.
 */

const BIN = join(import.meta.dirname, "../../dist/cli.js");
const run = promisify(execFile);

let dir: string;
let browser: Browser;
let server: PageServer;
let campaign: CampaignSummary;
let scenario: ScenarioSummary;
const pages = new Map<string, () => string>();

async function open(path: string, colorScheme: "light" | "dark") {
  const context = await openContext(browser, {
    viewport: { width: 960, height: 900 },
    colorScheme,
  });
  const url = `${server.origin}${path}`;
  const watched = await watchedPage(context, (u) => u === url);
  await watched.page.goto(url);
  await watched.page.waitForSelector("#report[data-state=ready]");
  return { ...watched, context, url };
}

describe("standalone report in Chromium", {
  ...needs("chromium"),
  timeout: BROWSER_TEST_TIMEOUT_MS,
}, () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "report-browser-"));
    const csv = await writeCampaignCsv(dir);
    const xlsx = await writeScenarioXlsx(dir);
    const many = await writeManyRoundsCsv(dir);
    for (const [file, out] of [
      [csv, "campaign.html"],
      [xlsx, "scenario.html"],
      [many, "many-rounds.html"],
    ] as const) {
      // In English: Asia/Seoul alone would make them Korean (korean-page.test.ts reads those).
      const { stdout } = await run(
        process.execPath,
        [BIN, "report", file, "--out", join(dir, out), "--lang", "en"],
        { env: { ...process.env, CRM_TIME_ZONE: "Asia/Seoul" } },
      );
      expect(stdout).toContain(`Wrote ${join(dir, out)}`);
      const html = await readFile(join(dir, out), "utf8");
      pages.set(`/${out}`, () => html);
    }
    const c = await summarizeFile(csv, { timeZone: "Asia/Seoul" });
    const s = await summarizeFile(xlsx);
    if (c.kind !== "campaign_event_data" || s.kind !== "scenario_daily_metrics") {
      throw new Error("fixtures summarized as the wrong kind");
    }
    campaign = c;
    scenario = s;
    server = await servePages(pages);
    browser = await launchBrowser();
  }, BROWSER_TEST_TIMEOUT_MS);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it("campaign CSV: every chart drawn with one mark per value, no errors, no request", async () => {
    const { page, errors, requests, context, url } = await open("/campaign.html", "light");
    const ab = campaign.ab_test;
    expect(await chartMarks(page)).toEqual({
      funnel: campaign.rounds.length * 5,
      "ab-rates": ab.groups.length * 2,
      "ab-difference": ab.comparisons.length + (ab.control?.comparison ? 1 : 0),
      "opens-by-hour": 24,
      "first-open": 2,
      "failures-by-code": campaign.failures.length,
      "delivery-by-channel": campaign.delivery.by_channel.length * 2,
    });
    // The fixture's numbers behind the marks: 4 rounds, 2 groups, 2 comparisons and the control.
    expect(campaign.rounds).toHaveLength(4);
    expect(ab.groups.map((g) => g.group)).toEqual(["그룹A", "그룹B"]);
    // Korean text from the file reaches the page as text.
    expect(await page.textContent("h1")).toBe("Campaign export: campaign-캠페인.csv");
    // Canvases hold drawn pixels, not an empty frame.
    const inked = await inkedPixels(page);
    expect(inked.length).toBe(7);
    for (const n of inked) expect(n).toBeGreaterThan(500);
    // The campaign page's screenshots are korean-page.test.ts's, of both languages.
    expect(errors).toEqual([]);
    expect(requests).toEqual([url]);
    await context.close();
  });

  it("every chart has a table view with one row per category", async () => {
    const { page, errors, context } = await open("/campaign.html", "light");
    const figures = await page.$$("figure");
    expect(figures.length).toBe(7);
    for (const fig of figures) {
      const table = await fig.$("[data-table-for]");
      expect(await table?.isHidden()).toBe(true);
      await (await fig.$("button:text('Table')"))?.click();
      expect(await table?.isVisible()).toBe(true);
      expect(await (await fig.$(".chart"))?.isHidden()).toBe(true);
      expect(await (await fig.$("button:text('Table')"))?.getAttribute("aria-pressed")).toBe(
        "true",
      );
    }
    const rows = await inPage<Record<string, number>>(
      page,
      `Object.fromEntries([...document.querySelectorAll("[data-table-for]")].map((e) => [e.dataset.tableFor, e.querySelectorAll("tbody tr").length]))`,
    );
    expect(rows["opens-by-hour"]).toBe(24);
    expect(rows.funnel).toBe(campaign.rounds.length);
    const firstRound = await page.textContent("[data-table-for=funnel] tbody tr");
    const r0 = campaign.rounds[0];
    expect(firstRound).toContain(r0?.group ?? "?");
    expect(firstRound).toContain((r0?.sent ?? -1).toLocaleString("en-US"));
    expect(errors).toEqual([]);
    await context.close();
  });

  it("scenario XLSX in the dark theme: a line per node and day, the branch bars", async () => {
    const { page, errors, requests, context, url } = await open("/scenario.html", "dark");
    const points = SCENARIO_NODES.length * SCENARIO_DAYS;
    expect(await chartMarks(page)).toEqual({
      "daily-sends": points,
      "daily-open-rate": points,
      "daily-conversions": points,
      "branch-0": (scenario.branches[0]?.arms.length ?? 0) * 2,
    });
    const background = await backgroundColor(page);
    expect(background).toBe("rgb(22, 25, 29)");
    expect(await page.textContent("#section-nodes tbody")).toContain("node_2_가입환영");
    // The button switches to the light theme and the charts are drawn again.
    await page.click("button.theme");
    expect(await backgroundColor(page)).toBe("rgb(255, 255, 255)");
    expect((await chartMarks(page))["daily-sends"]).toBe(points);
    await page.click("button.theme");
    await saveScreenshot(page, "report-scenario-dark.png");
    expect(errors).toEqual([]);
    expect(requests).toEqual([url]);
    await context.close();
  });

  it("a note on what a chart leaves out says where to find it from a file, not in a tool result", async () => {
    const { page, errors, context } = await open("/many-rounds.html", "light");
    const { funnel, "failures-by-code": failures } = await notes(page);
    expect({ funnel, "failures-by-code": failures }).toEqual({
      funnel:
        "Not drawn: the earlier 16 round-and-group rows of 8 send rounds; `crm-insights-mcp summarize --json` on the export prints them all.",
      "failures-by-code":
        "Not drawn: 2 more error codes; `crm-insights-mcp summarize --json` on the export prints them all.",
    });
    expect(await page.textContent("#report")).not.toContain("structuredContent");
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe("the standalone report page", () => {
  it("refers to no external URL", async () => {
    const html = await readFile(join(import.meta.dirname, "../../dist/report/view.html"), "utf8");
    // A ceiling that catches a library bundled by mistake; the words of both languages (about
    // 16 KB) are meant to be there.
    expect(Buffer.byteLength(html)).toBeLessThan(540 * 1024);
    // Nothing the browser would load: no src/href/srcset attribute outside the script, no CSS
    // url() other than data:, no @import. (Matches are shown, not the 500 KB page.)
    const markup = html.replace(/<script[^>]*>[\s\S]*?<\/script>/g, "<script></script>");
    const css = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]).join("");
    expect(css.length).toBeGreaterThan(1000);
    expect(markup.match(/\b(src|href|srcset|action|poster)\s*=/gi)).toBeNull();
    expect(css.match(/url\(\s*["']?(?!data:)[^)\s]/gi)).toBeNull();
    expect(html.match(/@import/gi)).toBeNull();
    // The only absolute URLs are strings the bundled libraries compare or print, never load:
    // JSON Schema dialect identifiers, a JSON Schema validator's base for resolving $ref, an IPv6
    // URL template of the MCP client's URL checks and an example in ext-apps' CSP field docs.
    const urls = [...new Set(html.match(/\bhttps?:\/\/[^\s"'`)<>]+/g) ?? [])];
    const known = [
      /^https?:\/\/json-schema\.org\/draft[-/][\d-]+\/schema#?$/,
      /^https:\/\/github\.com\/cfworker$/,
      /^http:\/\/\[\$\{\w+\}\]$/,
      /^https:\/\/\*\.example\.com$/,
    ];
    const identifiers = urls.filter((u) => known.some((k) => k.test(u)));
    expect(urls).toEqual(identifiers);
  });
});

/** Each chart's note, by the chart it is under. */
function notes(page: Parameters<typeof inPage>[0]): Promise<Record<string, string>> {
  return inPage<Record<string, string>>(
    page,
    `Object.fromEntries([...document.querySelectorAll("figure")].filter((f) => f.querySelector(".note")).map((f) => [f.querySelector("[data-table-for]")?.dataset.tableFor, f.querySelector(".note").textContent]))`,
  );
}
