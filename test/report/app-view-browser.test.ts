import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer } from "../../src/server.js";
import { needs } from "../helpers/needs.js";
import { type Harness, sandboxClock, startHarness } from "../helpers/tool-harness.js";
import {
  BROWSER_TEST_TIMEOUT_MS,
  backgroundColor,
  chartMarks,
  inPage,
  launchBrowser,
  openContext,
  type PageServer,
  saveScreenshot,
  servePages,
  watchedPage,
} from "./browser-support.js";
import { writeCampaignCsv, writeManyRoundsCsv } from "./fixtures.js";

// Reads the built page, `dist/report/view.html`, so it runs after the build (vitest.config.ts).

/**
 * The MCP App: tools/list names the view, resources/read serves it, and the page it serves,
 * loaded by a minimal host that speaks the ext-apps messages, draws the real tool results it
 * is handed (summarize_export over a known file, campaign_metrics over the sandbox) without a
 * console error or a network request.
 */

const VIEW_URI = "ui://crm-insights/report.html";
const APP_MIME = "text/html;profile=mcp-app";

let h: Harness;
let csv: string;
let browser: Browser;
let server: PageServer;
let appClient: Client;
let closeAppServer: () => Promise<void>;

beforeAll(async () => {
  h = await startHarness();
  // In the data folder: the tools read no file outside it.
  csv = await writeCampaignCsv(h.dataDir);
  // A second client on the same server config that says it renders MCP Apps.
  const built = createServer(h.config, { now: sandboxClock().now });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  appClient = new Client(
    { name: "apps-host", version: "1.0.0" },
    { capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [APP_MIME] } } } },
  );
  await built.server.connect(serverSide);
  await appClient.connect(clientSide);
  closeAppServer = async () => {
    await appClient.close();
    await built.close();
  };
}, 60_000);

afterAll(async () => {
  await closeAppServer?.();
  await h?.close();
});

describe("the report as an MCP App", () => {
  it("summarize_export and campaign_metrics name the view; resources/read serves it", async () => {
    const { tools } = await h.client.listTools();
    for (const name of ["summarize_export", "campaign_metrics"]) {
      const tool = tools.find((t) => t.name === name);
      expect(tool?._meta).toEqual({ ui: { resourceUri: VIEW_URI }, "ui/resourceUri": VIEW_URI });
    }
    expect(
      tools
        .filter((t) => t._meta !== undefined)
        .map((t) => t.name)
        .sort(),
    ).toEqual(["campaign_metrics", "query_export", "summarize_export"]);
    const { contents } = await h.client.readResource({ uri: VIEW_URI });
    expect(contents).toHaveLength(1);
    expect(contents[0]?.mimeType).toBe(APP_MIME);
    const html = (contents[0] as { text: string }).text;
    expect(html.startsWith("<!doctype html>")).toBe(true);
    expect(html).toContain('<script type="application/json" id="report-data"></script>');
    const { resources } = await h.client.listResources();
    expect(resources.find((r) => r.uri === VIEW_URI)?.mimeType).toBe(APP_MIME);
  });

  it("the text stays complete for hosts without apps; only they get the report hint", async () => {
    const plain = await h.call("summarize_export", { file: csv });
    const apps = await appClient.callTool({ name: "summarize_export", arguments: { file: csv } });
    expect(apps.structuredContent).toEqual(plain.structured);
    const appsText = (apps.content as Array<{ type: string; text?: string }>)
      .flatMap((c) => (c.text === undefined ? [] : [c.text]))
      .join("\n");
    expect(plain.text).toContain(appsText.split("\n")[1] ?? "?");
    expect(plain.text).toContain('"report": true');
    expect(appsText).not.toContain('"report": true');
  });
});

describe("the report as an MCP App, in a minimal host", {
  ...needs("chromium"),
  timeout: BROWSER_TEST_TIMEOUT_MS,
}, () => {
  beforeAll(async () => {
    const hostHtml = await readFile(join(import.meta.dirname, "host.html"), "utf8");
    server = await servePages(new Map([["/host.html", () => hostHtml]]));
    browser = await launchBrowser();
  }, BROWSER_TEST_TIMEOUT_MS);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  /** The view in the minimal host, whose context says `ko-KR` unless `hostContext` says else. */
  async function hostPage(
    theme: "light" | "dark",
    input: unknown,
    result: unknown,
    hostContext: Record<string, unknown> = {},
  ) {
    // Tall enough for the whole view: a cross-origin frame is painted only where it is on screen.
    const context = await openContext(browser, { viewport: { width: 1000, height: 3400 } });
    const hostUrl = `${server.origin}/host.html`;
    const watched = await watchedPage(context, (u) => u === hostUrl || u === "about:srcdoc");
    await watched.page.goto(hostUrl);
    const { contents } = await appClient.readResource({ uri: VIEW_URI });
    const html = (contents[0] as { text: string }).text;
    await inPage(
      watched.page,
      `startHost(${JSON.stringify(html)}, ${JSON.stringify(input)}, ${JSON.stringify(result)}, ${JSON.stringify(theme)}, ${JSON.stringify(hostContext)})`,
    );
    const frame = watched.page.frameLocator("#view");
    await frame.locator("#report[data-state=ready]").waitFor();
    const view = watched.page.frames().find((f) => f !== watched.page.mainFrame());
    if (view === undefined) throw new Error("the view's frame did not load");
    return { ...watched, context, view, hostUrl };
  }

  it("draws a summarize_export result the host hands it, in the host's theme", async () => {
    const args = { file: csv };
    const result = await appClient.callTool({ name: "summarize_export", arguments: args });
    const summary = result.structuredContent as {
      rounds: unknown[];
      failures: unknown[];
      delivery: { by_channel: unknown[] };
    };
    const { page, view, errors, requests, context, hostUrl } = await hostPage("dark", args, result);
    const marks = await chartMarks(view);
    expect(marks.funnel).toBe(summary.rounds.length * 5);
    expect(marks["opens-by-hour"]).toBe(24);
    expect(marks["failures-by-code"]).toBe(summary.failures.length);
    expect(marks["delivery-by-channel"]).toBe(summary.delivery.by_channel.length * 2);
    expect(await backgroundColor(view)).toBe("rgb(22, 25, 29)");
    // The host switches to light: the view follows and draws its charts again.
    await inPage(page, `setTheme("light")`);
    await view.waitForFunction(
      "getComputedStyle(document.body).backgroundColor === 'rgb(255, 255, 255)'",
    );
    expect((await chartMarks(view)).funnel).toBe(summary.rounds.length * 5);
    // The handshake happened, and the view told the host its size.
    const log = await inPage<Array<{ method?: string }>>(page, "window.hostLog");
    const methods = log.map((m) => m.method);
    expect(methods).toContain("ui/initialize");
    expect(methods).toContain("ui/notifications/initialized");
    expect(methods).toContain("ui/notifications/size-changed");
    await saveScreenshot(page, "app-view-summarize.png");
    expect(errors).toEqual([]);
    expect(requests).toEqual([hostUrl]);
    await context.close();
  });

  it("a note on what a chart leaves out points to the tool result", async () => {
    const args = { file: await writeManyRoundsCsv(h.dataDir) };
    const result = await appClient.callTool({ name: "summarize_export", arguments: args });
    expect(result.isError).not.toBe(true);
    const notes = {
      "en-US":
        "Not drawn: the earlier 16 round-and-group rows of 8 send rounds; the tool result has them all.",
      "ko-KR":
        "차트에 없는 항목: 이전 회차·그룹 행 16개 (발송 회차 8회). 도구 결과에 모두 있습니다.",
    };
    for (const [locale, expected] of Object.entries(notes)) {
      const { view, errors, context } = await hostPage("light", args, result, { locale });
      const note = await inPage<string | undefined>(
        view,
        `[...document.querySelectorAll("figure")].find((f) => f.querySelector("[data-table-for=funnel]"))?.querySelector(".note")?.textContent`,
      );
      expect(note, locale).toBe(expected);
      expect(errors).toEqual([]);
      await context.close();
    }
  });

  it("draws campaign_metrics with its rounds", async () => {
    const args = { task_from: "2026-09-01", task_to: "2026-11-21", include_tasks: true, top_n: 8 };
    const result = await appClient.callTool({ name: "campaign_metrics", arguments: args });
    expect(result.isError).not.toBe(true);
    const data = result.structuredContent as { campaigns: unknown[]; tasks: unknown[] };
    expect(data.campaigns.length).toBeGreaterThan(1);
    const { view, errors, requests, context, hostUrl } = await hostPage("light", args, result);
    const marks = await chartMarks(view);
    expect(marks["campaign-volume"]).toBe(data.campaigns.length * 2);
    expect(marks["rounds-over-time"]).toBe(Math.min(60, data.tasks.length) * 3);
    // The host's locale is ko-KR: the view speaks Korean, its window in KST the Korean way.
    expect(await view.textContent("h1")).toBe("캠페인 성과");
    expect(await view.textContent(".subtitle")).toMatch(
      /^기간 2026\. 9\. 1\. 00:00 ~ 2026\. 11\. 22\. 00:00 \(한국 시간, 종료 시각 제외\)$/,
    );
    expect(errors).toEqual([]);
    expect(requests).toEqual([hostUrl]);
    await context.close();
  });

  it("an error result is shown as the tool's own message", async () => {
    const args = { job_id: "exp_never_made" };
    const result = await appClient.callTool({ name: "summarize_export", arguments: args });
    expect(result.isError).toBe(true);
    const context = await openContext(browser);
    const hostUrl = `${server.origin}/host.html`;
    const { page, errors } = await watchedPage(
      context,
      (u) => u === hostUrl || u === "about:srcdoc",
    );
    await page.goto(hostUrl);
    const { contents } = await appClient.readResource({ uri: VIEW_URI });
    await inPage(
      page,
      `startHost(${JSON.stringify((contents[0] as { text: string }).text)}, ${JSON.stringify(args)}, ${JSON.stringify(result)}, "light")`,
    );
    const status = page.frameLocator("#view").locator("#report[data-state=error] .status");
    await status.waitFor();
    expect(await status.textContent()).toContain("export job exp_never_made was not found");
    expect(errors).toEqual([]);
    await context.close();
  });
});
