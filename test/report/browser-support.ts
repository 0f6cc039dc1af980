import { rmSync } from "node:fs";
import { mkdir, mkdtemp } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  chromium,
  type Page,
} from "playwright-core";
import { chromiumPath, missing } from "../helpers/needs.js";

/** Screenshots the tests write for people to look at; ignored by git. */
export const ARTIFACTS = join(import.meta.dirname, "../../test-artifacts");

/**
 * Deadline of a test that drives the browser: such a test takes 5-15 s alone, and several times
 * that on a machine whose cores are busy with other work (another test run, a build).
 */
export const BROWSER_TEST_TIMEOUT_MS = 120_000;

/**
 * Deadline of one step in a page (a wait for the view, a click): shorter than the test's, so a
 * step that never happens fails naming what it waited for.
 */
export const BROWSER_STEP_TIMEOUT_MS = 60_000;

/**
 * Headless Chromium (test/helpers/needs.ts finds it); a test file launches one for all its
 * tests, each test in a context of its own. Tests that call this declare needs("chromium").
 */
export async function launchBrowser(): Promise<Browser> {
  const absent = missing("chromium");
  if (absent !== undefined) {
    throw new Error(`${absent}: the describe() around this test should have needs("chromium")`);
  }
  await mkdir(ARTIFACTS, { recursive: true });
  // Chromium keeps files of its own in TMPDIR (".org.chromium.Chromium.*", shared memory where
  // /dev/shm is small) and can leave one behind when a renderer ends mid-way; the run's check of
  // its temp folder (test/setup/temp-folder.ts) would then fail a run whose tests all passed. Each
  // browser gets a folder of its own, removed with everything in it once the browser is gone.
  const temp = await mkdtemp(join(tmpdir(), "chromium-"));
  const browser = await chromium
    .launch({
      executablePath: chromiumPath(),
      env: { ...process.env, TMPDIR: temp, TMP: temp, TEMP: temp },
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    })
    .catch((error: unknown) => {
      rmSync(temp, { recursive: true, force: true });
      throw error;
    });
  browser.on("disconnected", () => rmSync(temp, { recursive: true, force: true }));
  return browser;
}

/** A browser context whose steps wait up to BROWSER_STEP_TIMEOUT_MS. */
export async function openContext(
  browser: Browser,
  options: BrowserContextOptions = {},
): Promise<BrowserContext> {
  const context = await browser.newContext(options);
  context.setDefaultTimeout(BROWSER_STEP_TIMEOUT_MS);
  return context;
}

/**
 * The whole page in test-artifacts/, one CSS pixel a pixel: a context at deviceScaleFactor 2
 * would otherwise encode four times the pixels, seconds of CPU for a picture nobody asserts on.
 */
export async function saveScreenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, name), fullPage: true, scale: "css" });
}

/** Pages served from loopback: path -> HTML. Every request is recorded. */
export interface PageServer {
  origin: string;
  requests: string[];
  close(): Promise<void>;
}

export async function servePages(pages: Map<string, () => string>): Promise<PageServer> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(req.url ?? "");
    const page = pages.get(req.url ?? "");
    if (page === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * A page that records console errors, page errors and every request it (or a frame in it)
 * makes; requests other than `allowed` are aborted, so a page that reaches out fails its test.
 */
export async function watchedPage(
  context: BrowserContext,
  allowed: (url: string) => boolean,
): Promise<{ page: Page; errors: string[]; requests: string[] }> {
  const errors: string[] = [];
  const requests: string[] = [];
  await context.route("**/*", async (route) => {
    const url = route.request().url();
    if (allowed(url)) await route.continue();
    else await route.abort();
  });
  const page = await context.newPage();
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") errors.push(`${m.type()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
  page.on("request", (r) => requests.push(r.url()));
  page.on("requestfailed", (r) => errors.push(`request failed: ${r.url()}`));
  return { page, errors, requests };
}

/**
 * Runs browser-side code given as text: these tests compile without the DOM library (the Node
 * code must not see browser globals), so code that names DOM types is evaluated as a string.
 */
export async function inPage<T>(frame: Pick<Page, "evaluate">, expression: string): Promise<T> {
  return (await frame.evaluate(expression)) as T;
}

/** data-marks of every chart in the frame, by chart id. */
export function chartMarks(frame: Pick<Page, "evaluate">): Promise<Record<string, number>> {
  return inPage(
    frame,
    `Object.fromEntries([...document.querySelectorAll(".chart")].map((e) => [e.dataset.chart, Number(e.dataset.marks)]))`,
  );
}

/** Painted pixels of each canvas: a drawn chart has many, an empty frame none. */
export function inkedPixels(frame: Pick<Page, "evaluate">): Promise<number[]> {
  return inPage(
    frame,
    `[...document.querySelectorAll("canvas")].map((c) => {
      const data = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      let painted = 0;
      for (let i = 3; i < data.length; i += 4) if (data[i] > 0) painted++;
      return painted;
    })`,
  );
}

export function backgroundColor(frame: Pick<Page, "evaluate">): Promise<string> {
  return inPage(frame, "getComputedStyle(document.body).backgroundColor");
}
