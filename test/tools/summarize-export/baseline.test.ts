import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CampaignBaseline as Baseline } from "../../../src/history/baseline.js";
import type { SandboxCampaign } from "../../../src/sandbox/world/types.js";
import { untilKept } from "../../helpers/history-kept.js";
import { must } from "../../helpers/must.js";
import {
  type Harness,
  startHarness,
  type ToolResult,
  toResult,
} from "../../helpers/tool-harness.js";
import { namedCalls, run } from "../../prompts/named-calls.js";

/**
 * summarize_export's `baseline` through the SDK client on the sandbox: a campaign's rates against
 * the other campaigns of its channel that the server's downloads added to the history, and what
 * the text says while the history holds too few of them.
 */

const RATES = ["delivery", "open", "click", "conversion", "failure"] as const;
type Rate = (typeof RATES)[number];

interface Totals {
  sent: number;
  received: number;
  failed: number;
  opens: number;
  clicks: number;
  send_group_conversions: number;
}

let h: Harness;
let channel: string;
/** Four campaigns of one channel, the smallest first: A is the one summarized. */
let campaigns: SandboxCampaign[];
const jobs = new Map<string, { jobId: string; path: string }>();

beforeAll(async () => {
  h = await startHarness({ env: { CRM_EXPORT_BUDGET: "20/600" } });
  const byChannel = new Map<string, SandboxCampaign[]>();
  for (const c of h.sandbox.world.campaigns) {
    const first = c.tasks[0];
    if (c.role !== "normal" || first === undefined || !c.tasks.some((t) => t.aggregated)) continue;
    byChannel.set(first.channel, [...(byChannel.get(first.channel) ?? []), c]);
  }
  const records = (c: SandboxCampaign) =>
    c.tasks.reduce((sum, t) => sum + t.rounds.reduce((s, r) => s + r.records, 0), 0);
  const [name, four] = must(
    [...byChannel].find(([, list]) => list.length >= 4),
    "a channel with four campaigns in the sandbox",
  );
  channel = name;
  campaigns = [...four].sort((a, b) => records(a) - records(b)).slice(0, 4);
});
afterAll(async () => {
  await h?.close();
});

const nth = (i: number) => must(campaigns[i], `campaign ${i}`);
const jobOf = (c: SandboxCampaign) => must(jobs.get(c._id), `the export of ${c._id}`);

/** Exports the campaign and waits until the history keeps its file. */
async function exportKept(campaign: SandboxCampaign): Promise<void> {
  const r = await h.call("start_export", {
    type: "campaign_event_data",
    campaign_id: campaign._id,
    wait_seconds: 50,
  });
  expect(r.isError, r.text).toBeFalsy();
  const jobId = (r.structured.job as { _id: string })._id;
  const path = must(r.structured.file_path as string | undefined, "file_path of the export");
  jobs.set(campaign._id, { jobId, path });
  await untilKept((args) => h.call("check_export", args), jobId);
}

const summarize = async (args: Record<string, unknown>): Promise<ToolResult> => {
  const r = await h.call("summarize_export", { lang: "en", ...args });
  expect(r.isError, r.text).toBeFalsy();
  return r;
};

/** The rates as the baseline defines them, computed here from a summary's totals. */
function ratesOf(summary: ToolResult): Record<Rate, number> {
  const t = summary.structured.totals as Totals;
  const over = (a: number, b: number) => (b === 0 ? 0 : a / b);
  return {
    delivery: over(t.received, t.received + t.failed),
    open: over(t.opens, t.received),
    click: over(t.clicks, t.received),
    conversion: over(t.send_group_conversions, t.opens),
    failure: over(t.failed, t.sent),
  };
}

const roundDates = (summary: ToolResult) =>
  (summary.structured.rounds as { scheduled_at: string }[]).map((r) => r.scheduled_at.slice(0, 10));

describe("summarize_export's baseline", () => {
  it("with one other campaign of the channel kept: no baseline; the text says how many more", async () => {
    await exportKept(nth(0));
    await exportKept(nth(1));
    const r = await summarize({ job_id: jobOf(nth(0)).jobId });
    expect(r.structured.baseline).toBeUndefined();
    expect(r.text).toContain(
      `**Against its channel**: the history holds 1 other ${channel} campaign; a baseline needs 2 more.`,
    );
    // The call the text names runs as written, and lists campaigns with their channels.
    const [call, ...more] = namedCalls(r.text);
    expect(more).toEqual([]);
    expect(call?.tool).toBe("campaign_metrics");
    const listed = await run(h, must(call, "the named call"), []);
    const listedCampaigns = listed.structured.campaigns as { _id: string; channels: string[] }[];
    expect(listedCampaigns.find((c) => c._id === nth(0)._id)?.channels).toContain(channel);
  });

  it("after exports of four campaigns of one channel: median and quartiles of the other three", async () => {
    await exportKept(nth(2));
    await exportKept(nth(3));
    const others = [nth(1), nth(2), nth(3)];
    const summaries = [];
    for (const c of others) summaries.push(await summarize({ job_id: jobOf(c).jobId }));
    const own = await summarize({ job_id: jobOf(nth(0)).jobId });

    const baseline = own.structured.baseline as Baseline;
    expect(baseline.channel).toBe(channel);
    expect(baseline.campaigns).toBe(3);
    const dates = summaries.flatMap(roundDates).sort();
    expect(baseline.window).toEqual({ from: dates[0], to: dates.at(-1) });
    const value = ratesOf(own);
    for (const rate of RATES) {
      // Three values: the median is the middle one, the quartiles halfway to either side.
      const [low, mid, high] = summaries.map((s) => ratesOf(s)[rate]).sort((a, b) => a - b) as [
        number,
        number,
        number,
      ];
      const m = baseline.metrics[rate];
      expect(m.value, rate).toBeCloseTo(value[rate], 6);
      expect(m.median, rate).toBeCloseTo(mid, 6);
      expect(m.p25, rate).toBeCloseTo((low + mid) / 2, 6);
      expect(m.p75, rate).toBeCloseTo((mid + high) / 2, 6);
      const iqr = m.p75 - m.p25;
      const flag =
        m.value > m.p75 + 1.5 * iqr ? "above" : m.value < m.p25 - 1.5 * iqr ? "below" : null;
      expect(m.flag, rate).toBe(flag);
    }
    expect(own.text).toContain(
      `**Against its channel**: ${channel}, 3 other campaigns (${baseline.window.from} to ${baseline.window.to}), median and p25–p75: delivery `,
    );
    // Each of the others is compared with the three it is not.
    for (const s of summaries) expect((s.structured.baseline as Baseline).campaigns).toBe(3);
  });

  it("a file given by path is left out of its own baseline as well", async () => {
    const byJob = await summarize({ job_id: jobOf(nth(0)).jobId });
    const byFile = await summarize({ file: jobOf(nth(0)).path });
    expect(byFile.structured.baseline).toEqual(byJob.structured.baseline);
  });

  it("says it in Korean with lang ko", async () => {
    const r = await summarize({ job_id: jobOf(nth(0)).jobId, lang: "ko" });
    expect(r.text).toContain(`**채널 기준**: ${channel} 다른 캠페인 3개 (`);
    expect(r.text).toContain("발송 성공률");
  });

  it("with the history off: neither the field nor the line", async () => {
    const off = await h.restart({ CRM_HISTORY: "off" });
    const r = toResult(
      await off.callTool({
        name: "summarize_export",
        arguments: { job_id: jobOf(nth(0)).jobId },
      }),
    );
    expect(r.isError, r.text).toBeFalsy();
    expect(r.structured.totals).toBeDefined();
    expect(r.structured.baseline).toBeUndefined();
    expect(r.text).not.toContain("Against its channel");
  });

  it("a history that cannot be read: the summary, without baseline", async () => {
    const history = must(await h.runtime.history.history(), "the history");
    const catalogue = await history.catalogue();
    const lost = catalogue.partitions.filter(
      (p) => p.dataset === "events" && p.campaign_id === nth(1)._id,
    );
    expect(lost.length).toBeGreaterThan(0);
    for (const p of lost) await rm(join(history.folder, p.file));
    const r = await summarize({ job_id: jobOf(nth(0)).jobId });
    expect(r.structured.rows).toBeGreaterThan(0);
    expect(r.structured.baseline).toBeUndefined();
    expect(r.text).not.toContain("Against its channel");
  });
});
