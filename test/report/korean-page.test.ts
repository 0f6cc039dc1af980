import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { summarizeFile } from "../../src/analysis/index.js";
import type { SummaryResult } from "../../src/analysis/schemas.js";
import { en } from "../../src/report/i18n/en.js";
import { ko } from "../../src/report/i18n/ko.js";
import { needs } from "../helpers/needs.js";
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
import { writeCampaignCsv, writeManyRoundsCsv, writeScenarioXlsx } from "./fixtures.js";
import { dataWords, englishWords, pageText } from "./visible-text.js";

/**
 * `crm-insights-mcp report FILE --out r.html --lang ko` (the built bin, dist/cli.js) opened in
 * Chromium: every word a reader gets is Korean from the catalogue, but for the file's own values
 * and code names; Korean is drawn in a font that has Hangul (no tofu), in the page and on the
 * charts' canvases, in the Korean page and in the English one.
 */

const BIN = join(import.meta.dirname, "../../dist/cli.js");
const run = promisify(execFile);

/** Code names and units a Korean page may show: the command, the A/B arms, p and z, currency. */
const CODE_NAMES = ["crm-insights-mcp", "summarize", "json", "A", "B", "p", "z", "US", "KRW"];

/** Families with Hangul that a page may fall back to (Debian's fonts-nanum, fonts-noto-cjk, ...). */
const HANGUL_FONTS = /Nanum|Noto Sans CJK|Noto Sans KR|Noto Serif CJK|Malgun|Apple SD Gothic/;

let dir: string;
let browser: Browser;
let server: PageServer;
const pages = new Map<string, () => string>();
const summaries = new Map<string, SummaryResult>();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "report-korean-"));
  const files = {
    campaign: await writeCampaignCsv(dir),
    scenario: await writeScenarioXlsx(dir),
    many: await writeManyRoundsCsv(dir),
  };
  // The pages the tests open: every file in Korean, and the campaign in English too.
  const wanted = [
    ["campaign", "ko"],
    ["campaign", "en"],
    ["scenario", "ko"],
    ["many", "ko"],
  ] as const;
  for (const [name, file] of Object.entries(files)) {
    summaries.set(name, await summarizeFile(file, { timeZone: "Asia/Seoul" }));
  }
  for (const [name, lang] of wanted) {
    const out = join(dir, `${name}-${lang}.html`);
    await run(process.execPath, [BIN, "report", files[name], "--out", out, "--lang", lang], {
      env: { ...process.env, CRM_TIME_ZONE: "Asia/Seoul" },
    });
    const html = await readFile(out, "utf8");
    pages.set(`/${name}-${lang}.html`, () => html);
  }
  server = await servePages(pages);
  browser = await launchBrowser();
}, BROWSER_TEST_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

async function open(path: string) {
  const context = await openContext(browser, { viewport: { width: 960, height: 900 } });
  const url = `${server.origin}${path}`;
  const watched = await watchedPage(context, (u) => u === url);
  await watched.page.goto(url);
  await watched.page.waitForSelector("#report[data-state=ready]");
  return { ...watched, context };
}

/** Every plain string of a catalogue (the functions' sentences have values in them). */
function plainStrings(tree: object): string[] {
  return Object.values(tree).flatMap((v) =>
    typeof v === "string" ? [v] : typeof v === "object" && v !== null ? plainStrings(v) : [],
  );
}

describe("the report in Korean (--lang ko)", {
  ...needs("chromium"),
  timeout: BROWSER_TEST_TIMEOUT_MS,
}, () => {
  it("shows no English word but the file's values and code names", async () => {
    for (const name of ["campaign", "scenario", "many"]) {
      const { page, errors, context } = await open(`/${name}-ko.html`);
      const text = await pageText(page);
      expect(await inPage(page, "document.documentElement.lang")).toBe("ko");
      const allowed = [...CODE_NAMES, ...dataWords(summaries.get(name))];
      const english = text
        .map((t) => [t, englishWords(t, allowed)] as const)
        .filter(([, words]) => words.length > 0);
      expect(english, name).toEqual([]);
      // The page's own words are the Korean catalogue's: no English one of ours slipped in...
      const ours = plainStrings(en).filter(
        (s) => /[A-Za-z]{3}/.test(s) && !plainStrings(ko).includes(s),
      );
      expect(
        text.filter((t) => ours.some((s) => t.includes(s))),
        name,
      ).toEqual([]);
      // ... and the headings, buttons and columns are among them.
      const labels = await inPage<string[]>(
        page,
        `[...document.querySelectorAll("h2, .views button, .kpi .label, th")].map((e) => e.textContent)`,
      );
      const korean = new Set(plainStrings(ko));
      const fromFile = labels.filter((l) => !korean.has(l));
      // Columns that are the file's own (a scenario node's series, "#") are not ours to translate.
      expect(
        fromFile.filter((l) => !/^#/.test(l)),
        name,
      ).toEqual([]);
      expect(errors).toEqual([]);
      await context.close();
    }
  });

  it("writes numbers, money and dates the Korean way", async () => {
    const { page, context } = await open("/campaign-ko.html");
    expect(await page.textContent(".subtitle")).toBe(
      "행 785개 · 발송 회차 2회 · 2025. 3. 1. 10:00 ~ 2025. 3. 8. 10:00",
    );
    const revenue = await inPage<string>(
      page,
      `[...document.querySelectorAll(".kpi")].find((k) => k.querySelector(".label").textContent === "매출 (발송 그룹)").querySelector(".value").textContent`,
    );
    // Won without decimals; another currency in its own digits, never added to won.
    expect(revenue).toMatch(/^₩\d{1,3}(,\d{3})* \+ US\$\d+\.\d{2}$/);
    await context.close();
    const scenario = await open("/scenario-ko.html");
    await scenario.page.click("figure:has([data-chart=daily-sends]) .views button:text('표')");
    expect(await scenario.page.textContent("[data-table-for=daily-sends] tbody td")).toBe(
      "2025. 3. 1.",
    );
    await scenario.context.close();
  });

  it(
    "draws Korean in a font that has Hangul, in both languages' pages and on the canvases",
    needs("hangul-font"),
    async () => {
      for (const path of ["/campaign-ko.html", "/campaign-en.html", "/scenario-ko.html"]) {
        const { page, context } = await open(path);
        const fonts = await hangulFonts(page);
        // The English page has Korean too: the file's name, its groups.
        expect(fonts.length, path).toBeGreaterThan(path.endsWith("-ko.html") ? 10 : 1);
        for (const f of fonts) {
          // Every Hangul syllable of the element is a glyph of a font that has Hangul.
          expect(
            f.hangulGlyphs,
            `${path} ${f.selector}: ${JSON.stringify(f.fonts)}`,
          ).toBeGreaterThanOrEqual(f.syllables);
        }
        // The charts' font on a canvas: each syllable its own glyph, none the empty box that a
        // font without Hangul draws for all of them alike.
        const glyphs = await inPage<{
          distinct: number;
          count: number;
          blank: number;
          tofu: number;
        }>(
          page,
          `(() => {
          const font = getComputedStyle(document.body).fontFamily;
          const draw = (ch) => {
            const c = document.createElement("canvas");
            c.width = 48; c.height = 48;
            const x = c.getContext("2d");
            x.font = "32px " + font;
            x.fillText(ch, 4, 38);
            return Array.from(x.getImageData(0, 0, 48, 48).data.filter((_, i) => i % 4 === 3)).join(",");
          };
          const syllables = [..."발송수신오픈전환대조군"];
          const maps = syllables.map(draw);
          const empty = draw(" ");
          const tofu = draw("\\u{10FFFD}");
          return {
            count: syllables.length,
            distinct: new Set(maps).size,
            blank: maps.filter((m) => m === empty).length,
            tofu: maps.filter((m) => m === tofu).length,
          };
        })()`,
        );
        expect(glyphs, path).toEqual({ count: 11, distinct: 11, blank: 0, tofu: 0 });
        await context.close();
      }
    },
  );

  it("screenshots of both languages (docs/report-ko.png, docs/report-en.png with UPDATE_DOCS_SCREENSHOT=1)", async () => {
    for (const lang of ["ko", "en"]) {
      const { page, errors, context } = await open(`/campaign-${lang}.html`);
      await page.screenshot({
        path: join(ARTIFACTS, `report-campaign-${lang}.png`),
        fullPage: true,
      });
      if (process.env.UPDATE_DOCS_SCREENSHOT === "1") {
        await mkdir(join(import.meta.dirname, "../../docs"), { recursive: true });
        await page.screenshot({
          path: join(import.meta.dirname, `../../docs/report-${lang}.png`),
          clip: { x: 0, y: 0, width: 960, height: 1180 },
          fullPage: true,
        });
      }
      expect(await page.textContent("h1")).toBe(
        lang === "ko"
          ? "캠페인 내보내기: campaign-캠페인.csv"
          : "Campaign export: campaign-캠페인.csv",
      );
      expect(errors).toEqual([]);
      await context.close();
    }
  });
});

interface ElementFonts {
  selector: string;
  syllables: number;
  hangulGlyphs: number;
  fonts: Array<{ familyName: string; glyphCount: number }>;
}

/**
 * The fonts Chromium drew each element with Hangul in (DevTools' CSS.getPlatformFontsForNode:
 * the platform font of every glyph run), and how many glyphs came from a font with Hangul.
 */
async function hangulFonts(page: Page): Promise<ElementFonts[]> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("DOM.enable");
  await cdp.send("CSS.enable");
  const { root } = await cdp.send("DOM.getDocument", { depth: -1 });
  const out: ElementFonts[] = [];
  // Shown elements only: a table behind its Table button is not laid out, so not drawn.
  const shown = [".table-wrap:not([hidden]) th", ".table-wrap:not([hidden]) td"];
  for (const selector of ["h1", "h2", ".kpi .label", ".views button", "figure h3", ...shown]) {
    const { nodeIds } = await cdp.send("DOM.querySelectorAll", { nodeId: root.nodeId, selector });
    for (const nodeId of nodeIds.slice(0, 6)) {
      const { node } = await cdp.send("DOM.describeNode", { nodeId, depth: -1 });
      const text = textOf(node);
      const syllables = [...text].filter((c) => /[\uac00-\ud7a3]/.test(c)).length;
      if (syllables === 0) continue;
      const { fonts } = await cdp.send("CSS.getPlatformFontsForNode", { nodeId });
      const hangulGlyphs = fonts
        .filter((f) => HANGUL_FONTS.test(f.familyName))
        .reduce((a, f) => a + f.glyphCount, 0);
      out.push({ selector, syllables, hangulGlyphs, fonts });
    }
  }
  await cdp.detach();
  return out;
}

interface DomNode {
  nodeType: number;
  nodeValue: string;
  children?: DomNode[];
}

/** The text directly in an element (its own text nodes: what getPlatformFontsForNode counts). */
function textOf(node: DomNode): string {
  return (node.children ?? [])
    .filter((c) => c.nodeType === 3)
    .map((c) => c.nodeValue)
    .join("");
}
