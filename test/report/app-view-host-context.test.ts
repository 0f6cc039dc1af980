import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Frame, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { summarizeFile } from "../../src/analysis/index.js";
import { needs } from "../helpers/needs.js";
import {
  BROWSER_TEST_TIMEOUT_MS,
  inPage,
  launchBrowser,
  openContext,
  type PageServer,
  servePages,
  watchedPage,
} from "./browser-support.js";
import { writeCampaignCsvWithLongTaskIds, writeScenarioXlsx } from "./fixtures.js";
import { measureReadability } from "./readability.js";

/**
 * The built view (dist/report/view.html) in the minimal host page, driven through the host
 * context as hosts send it: style variables in CSS syntax a canvas does not take, a locale, and
 * the stream of size-only changes a host sends while its frame is resized.
 */

const VIEW = new URL("../../dist/report/view.html", import.meta.url);

let dir: string;
let html: string;
let browser: Browser;
let server: PageServer;
let campaign: unknown;
let scenario: unknown;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "report-host-context-"));
  campaign = await summarizeFile(await writeCampaignCsvWithLongTaskIds(dir), {
    timeZone: "Asia/Seoul",
  });
  scenario = await summarizeFile(await writeScenarioXlsx(dir));
  html = await readFile(VIEW, "utf8");
  const hostHtml = await readFile(join(import.meta.dirname, "host.html"), "utf8");
  server = await servePages(new Map([["/host.html", () => hostHtml]]));
  browser = await launchBrowser();
}, BROWSER_TEST_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

interface Hosted {
  context: BrowserContext;
  page: Page;
  view: Frame;
  errors: string[];
}

async function host(
  structured: unknown,
  theme: "light" | "dark",
  extra: Record<string, unknown> = {},
): Promise<Hosted> {
  const context = await openContext(browser, {
    viewport: { width: 1000, height: 3400 },
    deviceScaleFactor: 2,
  });
  const hostUrl = `${server.origin}/host.html`;
  const { page, errors } = await watchedPage(context, (u) => u === hostUrl || u === "about:srcdoc");
  await page.goto(hostUrl);
  const result = { content: [{ type: "text", text: "summary" }], structuredContent: structured };
  await inPage(
    page,
    `startHost(${JSON.stringify(html)}, {}, ${JSON.stringify(result)}, ${JSON.stringify(theme)}, ${JSON.stringify(extra)})`,
  );
  await page.frameLocator("#view").locator("#report[data-state=ready]").waitFor();
  const view = page.frames().find((f) => f !== page.mainFrame());
  if (view === undefined) throw new Error("the view's frame did not load");
  return { context, page, view, errors };
}

function counts(view: Frame): Promise<{ renders: string; paints: string }> {
  return inPage(
    view,
    `({ renders: document.getElementById("report").dataset.renders, paints: document.getElementById("report").dataset.paints })`,
  );
}

async function sendContext(h: Hosted, params: Record<string, unknown>): Promise<void> {
  await inPage(h.page, `sendContext(${JSON.stringify(params)})`);
}

/** Waits until the view has painted `n` times in all. */
function painted(view: Frame, n: number): Promise<unknown> {
  return view.waitForFunction(`document.getElementById("report").dataset.paints === "${n}"`);
}

describe("the view and the host context", {
  ...needs("chromium"),
  timeout: BROWSER_TEST_TIMEOUT_MS,
}, () => {
  it("draws labels in the host's colours given as light-dark(), oklch() and var()", async () => {
    const variables = {
      "--color-text-primary": "light-dark(#0b3d91, #ffd166)",
      // A host variable that names another of the host's variables.
      "--color-text-secondary": "var(--color-text-info)",
      "--color-text-info": "light-dark(oklch(0.42 0.12 150), oklch(0.85 0.1 150))",
      "--color-background-primary": "light-dark(#ffffff, #101418)",
      "--color-background-secondary": "light-dark(#fafafa, #181c20)",
    };
    const h = await host(campaign, "dark", { styles: { variables } });
    const dark = await measureReadability(h.view);
    for (const c of dark.canvases) {
      expect(c.min, `${c.chart}: ${c.worst} on ${c.background}`).toBeGreaterThanOrEqual(4.5);
    }
    // The category labels are in the host's dark text colour: the canvas got a colour it takes.
    const funnel = dark.canvases.find((c) => c.chart === "funnel");
    expect(funnel?.background).toBe("rgb(24, 28, 32)");
    expect(funnel?.colors[0]).toBe("rgb(255, 209, 102)");
    expect(dark.poorText).toEqual([]);
    const before = await counts(h.view);

    await sendContext(h, { theme: "light" });
    await painted(h.view, Number(before.paints) + 1);
    const light = await measureReadability(h.view);
    const lightFunnel = light.canvases.find((c) => c.chart === "funnel");
    expect(lightFunnel?.background).toBe("rgb(250, 250, 250)");
    expect(lightFunnel?.colors[0]).toBe("rgb(11, 61, 145)");
    for (const c of light.canvases) expect(c.min).toBeGreaterThanOrEqual(4.5);
    expect(light.poorText).toEqual([]);
    // The value ticks: the secondary colour, oklch through var(), as the browser computes it.
    const ticks = await inPage<string>(
      h.view,
      `(() => { const s = document.createElement("span"); s.style.color = "var(--color-text-info)"; document.body.append(s); const c = document.createElement("canvas").getContext("2d"); c.fillStyle = getComputedStyle(s).color; c.fillRect(0, 0, 1, 1); s.remove(); return "rgb(" + [...c.getImageData(0, 0, 1, 1).data].slice(0, 3).join(", ") + ")"; })()`,
    );
    expect(light.canvases.find((c) => c.chart === "opens-by-hour")?.colors).toContain(ticks);
    expect((await counts(h.view)).renders).toBe(before.renders);

    // The legend shows nothing until a category is hovered, then the category in full.
    const legend = () =>
      inPage<string[]>(
        h.view,
        `[...document.querySelectorAll("[data-chart=funnel] .u-legend .u-value")].map((e) => e.textContent)`,
      );
    expect((await legend()).every((v) => v === "")).toBe(true);
    await h.page
      .frameLocator("#view")
      .locator("[data-chart=funnel] .u-over")
      .hover({ position: { x: 10, y: 60 } });
    const hovered = await legend();
    // The host's locale (ko-KR): the round's date the Korean way, its group at the end.
    expect(hovered[0]).toBe("tsk_7814637a2… 3. 1. 10:00 그룹A");
    expect(hovered.slice(1).every((v) => typeof v === "string" && /^\d+$/.test(v))).toBe(true);
    expect(h.errors).toEqual([]);
    await h.context.close();
  });

  it("a size-only change fits the charts and keeps Table views and scroll; a theme change repaints in place", async () => {
    // In English, whose longer words make the narrow table scroll sideways.
    const h = await host(campaign, "light", { locale: "en-US" });
    const frame = h.page.frameLocator("#view");
    await frame
      .locator("figure:has([data-chart=funnel]) .views button", { hasText: "Table" })
      .click();
    const before = await counts(h.view);
    // The host narrows its frame, and says so with a size-only context change.
    await inPage(h.page, `document.getElementById("view").style.width = "420px"`);
    await sendContext(h, { containerDimensions: { width: 420, maxHeight: 6000 } });
    await h.view.waitForFunction(
      `document.querySelector("[data-chart=opens-by-hour] canvas").getBoundingClientRect().width < 420`,
    );
    // The narrow table scrolls sideways; its scroll is set and must survive what follows.
    const scrolled = await inPage<number>(
      h.view,
      `(() => { const w = document.querySelector("[data-table-for=funnel]"); w.scrollLeft = 40; return w.scrollLeft; })()`,
    );
    expect(scrolled).toBe(40);
    await inPage(h.view, "window.sameDocument = true");
    for (const width of [400, 380, 420]) {
      await sendContext(h, { containerDimensions: { width, maxHeight: 6000 } });
    }
    await sendContext(h, { theme: "dark" });
    await painted(h.view, Number(before.paints) + 1);
    const state = await inPage<Record<string, unknown>>(
      h.view,
      `(() => {
        const wrap = document.querySelector("[data-table-for=funnel]");
        return {
          same: window.sameDocument === true,
          renders: document.getElementById("report").dataset.renders,
          tableShown: !wrap.hidden,
          chartHidden: document.querySelector("[data-chart=funnel]").hidden,
          scroll: wrap.scrollLeft,
          dark: getComputedStyle(document.body).backgroundColor,
        };
      })()`,
    );
    expect(state).toEqual({
      same: true,
      renders: before.renders,
      tableShown: true,
      chartHidden: true,
      scroll: 40,
      dark: "rgb(22, 25, 29)",
    });
    expect(h.errors).toEqual([]);
    await h.context.close();
  });

  it("writes words, numbers and dates in the host's locale, and again in place when it changes", async () => {
    const h = await host(scenario, "light", { locale: "de-DE" });
    const frame = h.page.frameLocator("#view");
    const read = () =>
      inPage<{
        labels: string[];
        rate: string;
        renders: string;
        table: boolean;
        lang: string;
        title: string;
        buttons: string[];
        day: string;
      }>(
        h.view,
        `({
          labels: JSON.parse(document.querySelector("[data-chart=daily-sends]").dataset.labels),
          rate: document.querySelector("[data-table-for=daily-open-rate] tbody td:nth-child(2)").textContent,
          renders: document.getElementById("report").dataset.renders,
          table: !document.querySelector("[data-table-for=daily-open-rate]").hidden,
          lang: document.documentElement.lang,
          title: document.querySelector("#section-daily h2").textContent,
          buttons: [...document.querySelectorAll("figure:has([data-chart=daily-open-rate]) .views button")].map((b) => b.textContent),
          day: document.querySelector("[data-table-for=daily-open-rate] tbody td").textContent,
        })`,
      );
    await frame
      .locator("figure:has([data-chart=daily-open-rate]) .views button", { hasText: "Table" })
      .click();
    const german = await read();
    expect(german.labels[0]).toBe("1. März");
    expect(german.rate).toMatch(/^\d{1,2},\d\u00a0%$/);
    expect(german.day).toBe("01.03.2025");
    expect(german.table).toBe(true);
    // German is not one of the page's languages: English words, German figures.
    expect(german).toMatchObject({ lang: "en", title: "Daily trend per node" });
    expect(german.buttons).toEqual(["Chart", "Table"]);
    const { paints } = await counts(h.view);
    await sendContext(h, { locale: "ko-KR" });
    await painted(h.view, Number(paints) + 1);
    const korean = await read();
    expect(korean.labels[0]).toBe("3월 1일");
    expect(korean.rate).toMatch(/^\d{1,2}\.\d%$/);
    expect(korean.day).toBe("2025. 3. 1.");
    // The words change in place: the same layout, the figure still on its Table view.
    expect(korean).toMatchObject({ renders: german.renders, table: true });
    expect(korean).toMatchObject({ lang: "ko", title: "노드별 일별 추이" });
    expect(korean.buttons).toEqual(["차트", "표"]);
    // A tag Intl does not know is ignored: the view keeps writing in the locale it has.
    await sendContext(h, { locale: "not a locale!" });
    await sendContext(h, { theme: "dark" });
    await painted(h.view, Number(paints) + 2);
    expect((await read()).labels[0]).toBe("3월 1일");
    expect(h.errors).toEqual([]);
    await h.context.close();
  });
});
