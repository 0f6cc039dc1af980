import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { Browser, Frame } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CampaignBaseline as Baseline } from "../../src/history/baseline.js";
import { langOfLocale, type ReportText, reportText } from "../../src/report/i18n/index.js";
import { buildReport } from "../../src/report/model.js";
import { createWorld, type SandboxCampaign } from "../../src/sandbox/world/index.js";
import { untilKept } from "../helpers/history-kept.js";
import { must } from "../helpers/must.js";
import { needs } from "../helpers/needs.js";
import { type ToolResult, toResult } from "../helpers/tool-harness.js";
import {
  ARTIFACTS,
  BROWSER_TEST_TIMEOUT_MS,
  inPage,
  launchBrowser,
} from "../report/browser-support.js";
import { measureReadability } from "../report/readability.js";
import { callTool, hostToolResult, openHost, switchHostTheme } from "./host-page.js";
import {
  type McpServer,
  type ReferenceHost,
  startMcpServer,
  startReferenceHost,
} from "./host-server.js";

/**
 * summarize_export's baseline drawn by the report view in the ext-apps reference host (vendored,
 * built by scripts/build-reference-host.mjs), which calls `serve --http` (the built bin) from the
 * browser. Four campaigns of one channel are exported through an MCP client to the same server
 * and kept in its history; the host then summarizes one of them. At 560 px, in English and
 * Korean, light and then dark: a row per rate whose box, median line and dot stand where the
 * result's numbers put them, the caption naming the channel and how many campaigns, each rate
 * outside its range said in words, nothing wider than the view, every text at 4.5:1.
 */

const BIN = new URL("../../dist/cli.js", import.meta.url).pathname;
const WIDTH = 560;
/**
 * The sandbox the server runs, given to it explicitly: the same seed and date build the same world
 * here, to find campaigns of one channel whose rounds have finished aggregating (exportable).
 */
const SANDBOX = { seed: 42, now: "2026-11-22T09:00:00+09:00" };
const RATES = ["delivery", "open", "click", "conversion", "failure"] as const;

let dataDir: string;
let server: McpServer | undefined;
let host: ReferenceHost;
let client: Client | undefined;
let browser: Browser;
/** The job the host summarizes, and the baseline an MCP client got for it. */
let shown: { jobId: string; baseline: Baseline };

async function call(name: string, args: Record<string, unknown>): Promise<ToolResult> {
  const r = toResult(await must(client, "MCP client").callTool({ name, arguments: args }));
  if (r.isError === true) throw new Error(`${name} ${JSON.stringify(args)}: ${r.text}`);
  return r;
}

/** Exports the campaign's events and waits until the server's history keeps the file. */
async function exportKept(campaign: SandboxCampaign): Promise<string> {
  const started = await call("start_export", {
    type: "campaign_event_data",
    campaign_id: campaign._id,
    wait_seconds: 50,
  });
  const jobId = (started.structured.job as { _id: string })._id;
  await untilKept((args) => call("check_export", args), jobId, {
    timeoutMs: 90_000,
    intervalMs: 250,
  });
  return jobId;
}

/** Four campaigns of one channel, whole and exportable: the channel whose four are smallest. */
function fourOfOneChannel(): SandboxCampaign[] {
  const world = createWorld({ seed: SANDBOX.seed, now: Date.parse(SANDBOX.now) });
  const records = (c: SandboxCampaign) =>
    c.tasks.reduce((sum, t) => sum + t.rounds.reduce((s, r) => s + r.records, 0), 0);
  const byChannel = new Map<string, SandboxCampaign[]>();
  for (const c of world.campaigns) {
    const channels = new Set(c.tasks.map((t) => t.channel));
    const [channel] = channels;
    if (c.role !== "normal" || channels.size !== 1 || channel === undefined) continue;
    if (!c.tasks.some((t) => t.aggregated)) continue;
    byChannel.set(channel, [...(byChannel.get(channel) ?? []), c]);
  }
  const fours = [...byChannel.values()]
    .filter((list) => list.length >= 4)
    .map((list) => [...list].sort((a, b) => records(a) - records(b)).slice(0, 4));
  const total = (list: SandboxCampaign[]) => list.reduce((sum, c) => sum + records(c), 0);
  return must(
    fours.sort((a, b) => total(a) - total(b))[0],
    "channel with four exportable campaigns",
  );
}

/** How many ways (above, below) a baseline's rates stray outside their channel's range. */
const ways = (b: Baseline) =>
  new Set(RATES.map((r) => b.metrics[r].flag).filter((f) => f !== null)).size;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "reference-host-baseline-"));
  host = await startReferenceHost();
  server = await startMcpServer({
    bin: BIN,
    dataDir,
    allowedOrigin: host.origin,
    env: {
      CRM_SANDBOX_SEED: String(SANDBOX.seed),
      CRM_SANDBOX_NOW: SANDBOX.now,
      // Loopback sandbox: jobs finish and are polled in fractions of a second.
      CRM_SANDBOX_JOB_SECONDS: "0.5",
      CRM_POLL_INTERVAL_SECONDS: "0.5",
    },
  });
  host.setServers([server.url]);
  client = new Client({ name: "reference-host-baseline", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  const jobs = await Promise.all(fourOfOneChannel().map(exportKept));
  const summaries: Array<{ jobId: string; baseline: Baseline }> = [];
  for (const jobId of jobs) {
    const r = await call("summarize_export", { job_id: jobId });
    const baseline = must(r.structured.baseline as Baseline | undefined, `baseline of ${jobId}`);
    summaries.push({ jobId, baseline });
  }
  // Each against the other three.
  expect(summaries.map((s) => s.baseline.campaigns)).toEqual([3, 3, 3, 3]);
  // The one shown strays the most ways, so the view says what it says of a flagged rate.
  shown = must(
    [...summaries].sort((a, b) => ways(b.baseline) - ways(a.baseline))[0],
    "summary with a baseline",
  );
  expect(ways(shown.baseline)).toBeGreaterThan(0);
  browser = await launchBrowser();
}, 4 * 60_000);

afterAll(async () => {
  await browser?.close();
  await client?.close();
  await host?.close();
  await server?.close();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
}, BROWSER_TEST_TIMEOUT_MS);

interface SeenRow {
  name: string;
  value: string;
  median: string;
  flag: string | null;
  /** Left and right edges (CSS px) of the track, the box, and the centres of median and dot. */
  track: [number, number];
  box: [number, number];
  medianX: number;
  dotX: number;
  /** The axis' labels, each with the x it marks (an end label's outer edge, else its centre). */
  ticks: Array<{ text: string; x: number }>;
}
interface SeenSection {
  h2: string;
  lines: string[];
  title: string;
  note: string;
  marks: string | undefined;
  rows: SeenRow[];
  /** Whether the view scrolls sideways, and what in the section reaches past its edges. */
  pageScrolls: boolean;
  outside: string[];
}

/** The baseline section as the view drew it, read in the view's frame. */
function readSection(view: Frame): Promise<SeenSection> {
  return inPage<SeenSection>(
    view,
    `(() => {
      const s = document.getElementById("section-baseline");
      const edges = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.right]; };
      const centre = (e) => { const [l, r] = edges(e); return (l + r) / 2; };
      const bounds = s.getBoundingClientRect();
      return {
        h2: s.querySelector("h2").textContent,
        lines: [...s.querySelectorAll(":scope > p.muted")].map((p) => p.textContent),
        title: s.querySelector("figure h3").textContent,
        note: s.querySelector("figure .note").textContent,
        marks: s.querySelector("[data-chart=baseline-rates]").dataset.marks,
        rows: [...s.querySelectorAll(".box-row")].map((row) => ({
          name: row.querySelector(".box-name").textContent,
          value: row.querySelector(".box-value").textContent,
          median: row.querySelector(".box-median-text").textContent,
          flag: row.querySelector(".box-flag")?.textContent ?? null,
          track: edges(row.querySelector(".box-track")),
          box: edges(row.querySelector(".box-iqr")),
          medianX: centre(row.querySelector(".box-median")),
          dotX: centre(row.querySelector(".box-dot")),
          ticks: [...row.querySelectorAll(".box-tick")].map((e, i, all) => ({
            text: e.textContent,
            x: i === 0 ? edges(e)[0] : i === all.length - 1 ? edges(e)[1] : centre(e),
          })),
        })),
        pageScrolls: document.documentElement.scrollWidth > document.documentElement.clientWidth,
        outside: [...s.querySelectorAll("*")]
          .filter((e) => e.getClientRects().length > 0)
          .filter((e) => {
            const [l, r] = edges(e);
            return l < bounds.left - 0.5 || r > bounds.right + 0.5;
          })
          .map((e) => e.className || e.tagName),
      };
    })()`,
  );
}

/** Where the dot stands against the box and the median, in words. */
function placeOf(x: { dot: number; left: number; right: number; median: number }): string {
  const box =
    x.dot < x.left ? "left of the box" : x.dot > x.right ? "right of the box" : "in the box";
  const median = x.dot < x.median ? "left of the median" : "right of the median";
  return `${box}, ${median}`;
}

/** The section against the result's baseline, in the page's language. */
function expectSection(seen: SeenSection, baseline: Baseline, t: ReportText, model: string) {
  const b = t.m.baseline;
  const pct = (v: number) => t.f.value(v, "percent");
  expect(seen.h2).toBe(b.section);
  expect(seen.title).toBe(b.chart(baseline.channel));
  // The caption names the channel and how many of its campaigns the boxes are over.
  expect(seen.note).toBe(model);
  expect(seen.note).toContain(
    t.lang === "ko"
      ? `${baseline.channel} 채널 최근 캠페인 ${baseline.campaigns}개`
      : `${baseline.channel}'s last ${baseline.campaigns} campaigns`,
  );
  // A rate outside its channel's range is said in words above the chart, and beside its row.
  const flagged = RATES.filter((r) => baseline.metrics[r].flag !== null);
  expect(seen.lines).toEqual(
    flagged.map((r) => {
      const m = baseline.metrics[r];
      const say = m.flag === "above" ? b.aboveText : b.belowText;
      return say(b.rates[r], pct(m.value), pct(m.median));
    }),
  );
  expect(seen.marks).toBe(String(RATES.length));
  expect(seen.rows.map(({ name, value, median, flag }) => ({ name, value, median, flag }))).toEqual(
    RATES.map((r) => {
      const m = baseline.metrics[r];
      return {
        name: b.rates[r],
        value: pct(m.value),
        median: `${b.median} ${pct(m.median)}`,
        flag: m.flag === "above" ? `▲ ${b.above}` : m.flag === "below" ? `▼ ${b.below}` : null,
      };
    }),
  );
  // The dot against the box and the median line, as the numbers have it.
  expect(
    seen.rows.map((r) =>
      placeOf({ dot: r.dotX, left: r.box[0], right: r.box[1], median: r.medianX }),
    ),
  ).toEqual(
    RATES.map((r) => {
      const m = baseline.metrics[r];
      return placeOf({ dot: m.value, left: m.p25, right: m.p75, median: m.median });
    }),
  );
  // One scale per row: the median, the dot and the axis' labels stand where the box's edges
  // (p25, p75) put them, to within 1% of the track; the dot within the track.
  seen.rows.forEach((row, i) => {
    const m = baseline.metrics[must(RATES[i], "rate")];
    const perUnit = (row.box[1] - row.box[0]) / (m.p75 - m.p25);
    const at = (v: number) => row.box[0] + (v - m.p25) * perUnit;
    const track = row.track[1] - row.track[0];
    const rate = RATES[i];
    expect(Math.abs(row.medianX - at(m.median)) / track, `${rate}: median`).toBeLessThan(0.01);
    expect(Math.abs(row.dotX - at(m.value)) / track, `${rate}: dot`).toBeLessThan(0.01);
    expect(row.ticks.length, `${rate}: axis labels`).toBeGreaterThanOrEqual(2);
    for (const tick of row.ticks) {
      // Both languages write a percent as 12.5%.
      expect(tick.text, `${rate}: axis label`).toMatch(/^\d+(\.\d+)?%$/);
      const said = Number.parseFloat(tick.text) / 100;
      expect(Math.abs(tick.x - at(said)) / track, `${rate}: axis label ${tick.text}`).toBeLessThan(
        0.01,
      );
    }
    expect(row.dotX, `${rate}: dot within the track`).toBeGreaterThanOrEqual(row.track[0]);
    expect(row.dotX, `${rate}: dot within the track`).toBeLessThanOrEqual(row.track[1]);
  });
  expect({ pageScrolls: seen.pageScrolls, outside: seen.outside }).toEqual({
    pageScrolls: false,
    outside: [],
  });
}

async function expectReadable(view: Frame, label: string): Promise<void> {
  const seen = await measureReadability(view);
  expect(seen.textElements).toBeGreaterThan(20);
  expect(seen.poorText, `${label}: text below 4.5:1`).toEqual([]);
  for (const c of seen.canvases) {
    expect(
      c.min,
      `${label}: ${c.chart}'s labels, ${c.worst} on ${c.background}`,
    ).toBeGreaterThanOrEqual(4.5);
  }
}

describe("summarize_export's baseline in the ext-apps reference host", {
  ...needs("chromium"),
  timeout: BROWSER_TEST_TIMEOUT_MS,
}, () => {
  for (const locale of ["en-US", "ko-KR"]) {
    it(`at ${WIDTH} px (${locale}): a box per rate with the dot where its value is, light and dark`, async () => {
      const { context, page, problems } = await openHost(
        browser,
        host,
        must(server, "server").url,
        {
          width: WIDTH,
          scheme: "light",
          locale,
        },
      );
      const view = await callTool(page, "summarize_export", { job_id: shown.jobId });
      const result = await hostToolResult(page);
      const baseline = (result.structuredContent as { baseline: Baseline }).baseline;
      expect(baseline).toEqual(shown.baseline);
      const t = reportText(langOfLocale(locale), locale);
      const chart = buildReport(result.structuredContent, "view", t).sections.find(
        (s) => s.id === "baseline",
      )?.charts[0];
      const note = must(chart?.note, "baseline chart's note in the model");

      const light = await readSection(view);
      expectSection(light, baseline, t, note);
      await expectReadable(view, `baseline ${locale} light`);

      await switchHostTheme(page, view, "dark");
      expectSection(await readSection(view), baseline, t, note);
      await expectReadable(view, `baseline ${locale} dark`);
      await page
        .frameLocator("iframe")
        .frameLocator("iframe")
        .locator("#section-baseline")
        .screenshot({
          path: join(ARTIFACTS, `reference-host-baseline-${WIDTH}-${locale}-dark.png`),
        });
      expect(problems).toEqual([]);
      await context.close();
    });
  }
});
