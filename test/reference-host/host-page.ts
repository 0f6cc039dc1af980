import type { Browser, BrowserContext, Frame, Page } from "playwright-core";
import { openContext } from "../report/browser-support.js";
import type { ReferenceHost } from "./host-server.js";

/**
 * The reference host's page as a person uses it, for the tests that drive it: opened in a
 * browser context of its own with everything it logs or fails to load recorded, a tool picked,
 * its arguments typed and Call Tool pressed, the result read from the host's own panel, the
 * host's theme switched with its button.
 */

/** The reference host's own style variables (its host-styles.ts), as the page resolves them. */
export const HOST_BACKGROUND = { light: "rgb(255, 255, 255)", dark: "rgb(26, 26, 26)" };

export interface HostSession {
  context: BrowserContext;
  page: Page;
  /** Console errors and warnings of every frame, failed requests, uncaught errors. */
  problems: string[];
}

/**
 * The host page at `width` px in `scheme`, the browser in `locale` (Chromium's own en-US unless
 * given). Only the host's two origins and the MCP server may be asked for anything; any other
 * request is blocked and recorded as a problem.
 */
export async function openHost(
  browser: Browser,
  host: Pick<ReferenceHost, "origin" | "sandboxOrigin">,
  mcpUrl: string,
  options: { width: number; scheme: "light" | "dark"; locale?: string },
): Promise<HostSession> {
  const context = await openContext(browser, {
    viewport: { width: options.width, height: 1400 },
    // A laptop's screen: label glyphs then have solid pixels to measure at every size.
    deviceScaleFactor: 2,
    colorScheme: options.scheme,
    ...(options.locale === undefined ? {} : { locale: options.locale }),
  });
  const problems: string[] = [];
  const allowed = [`${host.origin}/`, `${host.sandboxOrigin}/`, mcpUrl];
  await context.route("**/*", async (route) => {
    const url = route.request().url();
    if (allowed.some((a) => url.startsWith(a))) {
      await route.continue();
    } else {
      problems.push(`blocked request: ${url}`);
      await route.abort();
    }
  });
  const page = await context.newPage();
  // The host's MCP client opens a GET /mcp stream for server messages, which a stateless server
  // declines with 405 as Streamable HTTP allows; Chromium logs every 4xx as a console error. That
  // one message is expected only when such a response was seen; any other is a problem.
  let declinedStreams = 0;
  page.on("response", (r) => {
    if (r.request().method() === "GET" && r.url() === mcpUrl && r.status() === 405) {
      declinedStreams++;
    }
  });
  page.on("console", (m) => {
    if (m.type() !== "error" && m.type() !== "warning") return;
    if (
      declinedStreams > 0 &&
      m.text() ===
        "Failed to load resource: the server responded with a status of 405 (Method Not Allowed)"
    ) {
      declinedStreams--;
      return;
    }
    problems.push(`${m.type()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()}`));
  await page.goto(`${host.origin}/index.html`);
  return { context, page, problems };
}

/**
 * Picks the tool, types its arguments and presses Call Tool; resolves with the view's frame
 * (inside the sandbox proxy's) once the view has drawn.
 */
export async function callTool(
  page: Page,
  tool: string,
  args: Record<string, unknown>,
): Promise<Frame> {
  const toolSelect = page.locator("form label", { hasText: "Tool" }).locator("select");
  await toolSelect.locator(`option[value="${tool}"]`).waitFor({ state: "attached" });
  await toolSelect.selectOption(tool);
  await page.locator("form textarea").fill(JSON.stringify(args));
  await page.getByRole("button", { name: "Call Tool" }).click();
  await page
    .frameLocator("iframe")
    .frameLocator("iframe")
    .locator("#report[data-state=ready]")
    .waitFor();
  const view = page.frames().find((f) => f.parentFrame()?.parentFrame() === page.mainFrame());
  if (view === undefined) throw new Error("the view's frame (inside the sandbox proxy) is missing");
  return view;
}

/** The result the host handed the view, read from the host's own Tool Result panel. */
export async function hostToolResult(page: Page): Promise<{ structuredContent: unknown }> {
  await page.getByText("Tool Result").click();
  const text = await page.locator("pre").last().textContent();
  return JSON.parse(text ?? "null") as { structuredContent: unknown };
}

/** Presses the host's theme button; resolves once the view's page has the host's background. */
export async function switchHostTheme(
  page: Page,
  view: Frame,
  to: "light" | "dark",
): Promise<void> {
  await page.locator(`button[title="Switch to ${to} mode"]`).click();
  await view.waitForFunction(
    `getComputedStyle(document.body).backgroundColor === ${JSON.stringify(HOST_BACKGROUND[to])}`,
  );
}
