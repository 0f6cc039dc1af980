import { readFile } from "node:fs/promises";
import { parse } from "csv-parse/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/index.js";
import type { RunningSandbox } from "../../src/sandbox/types.js";
import { createWorld } from "../../src/sandbox/world/index.js";
import { must } from "../helpers/must.js";
import { type Harness, SANDBOX_NOW, sandboxClock, startHarness } from "../helpers/tool-harness.js";

/**
 * campaign_metrics against the CSV exports of the same window, through the real tools over the
 * sandbox, for every campaign of each window: every figure counted from the same events agrees,
 * and where the service's rules make them differ (currency, aggregation, the dates' zone) both
 * tools say so.
 */

interface TaskRow {
  _id: string;
  campaign_id: string;
  sent_count: number;
  received_count: number;
  open_count: number;
  click_count: number;
  purchase_count: number;
  revenue: number;
  revenue_currency: string;
  aggregating: boolean;
}

interface CampaignRow {
  _id: string;
  conversion_event_type: string;
  task_count: number;
  sent_count: number;
  received_count: number;
  open_count: number;
  click_count: number;
  purchase_count: number;
  revenue: Record<string, number>;
  rounds_aggregating: number;
}

interface Counts {
  sent: number;
  received: number;
  opens: number;
  clicks: number;
  purchases: number;
  /** currency -> amount, in hundredths (the sandbox's amounts have at most 2 decimals). */
  cents: Map<string, number>;
  /** currency -> conversion rows paid in it. */
  paid: Map<string, number>;
}

const newCounts = (): Counts => ({
  sent: 0,
  received: 0,
  opens: 0,
  clicks: 0,
  purchases: 0,
  cents: new Map(),
  paid: new Map(),
});

/** Per task_id, the export's rows counted by the contract's rules, independently of the tools. */
async function countCsv(path: string, conversionEvent: string): Promise<Map<string, Counts>> {
  const rows = parse(await readFile(path), { columns: true }) as Array<Record<string, string>>;
  const byTask = new Map<string, Counts>();
  for (const row of rows) {
    const taskId = must(row.task_id, "task_id");
    const c = byTask.get(taskId) ?? newCounts();
    byTask.set(taskId, c);
    const type = must(row.event_type, "event_type");
    if (type === "message_sent") c.sent++;
    else if (type === "message_received") c.received++;
    else if (type === "landing_clicked") c.clicks++;
    else if (/_(opened|clicked)$/.test(type)) c.opens++;
    else if (type === conversionEvent) {
      c.purchases++;
      const payment = JSON.parse(row.event_properties ?? "{}") as {
        revenue: number;
        currency: string;
      };
      c.cents.set(
        payment.currency,
        (c.cents.get(payment.currency) ?? 0) + Math.round(payment.revenue * 100),
      );
      c.paid.set(payment.currency, (c.paid.get(payment.currency) ?? 0) + 1);
    }
  }
  return byTask;
}

interface Compared {
  campaigns: number;
  exported: number;
  notReady: number;
  failed: number;
  tasksCompared: number;
  tasksMissingAggregating: number;
  /** Campaigns with no round aggregating, whose totals are compared with the file's. */
  campaignsWhole: number;
  nonKrwPurchases: number;
  metricsText: string;
  vsExport: string[];
}

/** One campaign_metrics call, then one export per campaign it lists, each compared round by round. */
async function compareWindow(
  h: Harness,
  window: { task_from: string; task_to: string },
  exportDates: { from: string; to: string },
  nextCreate: () => void,
): Promise<Compared> {
  const metrics = await h.call("campaign_metrics", { ...window, top_n: 500 });
  expect(metrics.isError, metrics.text).toBeFalsy();
  const campaigns = metrics.structured.campaigns as CampaignRow[];
  expect(metrics.structured.more_not_shown).toBe(0);
  const out: Compared = {
    campaigns: campaigns.length,
    exported: 0,
    notReady: 0,
    failed: 0,
    tasksCompared: 0,
    tasksMissingAggregating: 0,
    campaignsWhole: 0,
    nonKrwPurchases: 0,
    metricsText: metrics.text,
    vsExport: metrics.structured.vs_export as string[],
  };
  for (const campaign of campaigns) {
    // Its rounds, one campaign at a time so that no list is cut to the result budget.
    const rounds = await h.call("campaign_metrics", {
      ...window,
      campaign_ids: [campaign._id],
      include_tasks: true,
    });
    expect(rounds.structured.campaigns).toEqual([campaign]);
    const own = rounds.structured.tasks as TaskRow[];
    expect(own).toHaveLength(campaign.task_count);
    expect(campaign.rounds_aggregating).toBe(own.filter((t) => t.aggregating).length);
    nextCreate();
    const exported = await h.call("start_export", {
      type: "campaign_event_data",
      campaign_id: campaign._id,
      ...exportDates,
      wait_seconds: 30,
    });
    if (exported.isError) {
      if (exported.text.includes("ResourceNotReady")) {
        // Spec 4.2 rule 4: no round of the range is aggregated; campaign_metrics said so.
        expect(
          own.every((t) => t.aggregating),
          exported.text,
        ).toBe(true);
        out.notReady++;
        continue;
      }
      // The sandbox's one campaign whose export jobs always fail.
      expect(h.sandbox.world.campaign(campaign._id)?.role, exported.text).toBe("failing_export");
      expect(exported.text).toContain("failed on the service");
      out.failed++;
      continue;
    }
    out.exported++;
    const path = exported.structured.file_path as string;
    const csv = await countCsv(path, campaign.conversion_event_type);
    const total = newCounts();
    for (const task of own) {
      const c = csv.get(task._id);
      if (c === undefined) {
        // Left out of the export only while aggregating, as campaign_metrics flags.
        expect(task.aggregating, `${campaign._id} ${task._id}`).toBe(true);
        out.tasksMissingAggregating++;
        continue;
      }
      out.tasksCompared++;
      expect(
        {
          sent: task.sent_count,
          received: task.received_count,
          opens: task.open_count,
          clicks: task.click_count,
          purchases: task.purchase_count,
          revenueCents: Math.round(task.revenue * 100),
          currency: task.revenue_currency,
        },
        `${campaign._id} ${task._id}`,
      ).toEqual({
        sent: c.sent,
        received: c.received,
        opens: c.opens,
        clicks: c.clicks,
        purchases: c.purchases,
        revenueCents: c.cents.get("KRW") ?? 0,
        currency: "KRW",
      });
      total.sent += c.sent;
      total.received += c.received;
      total.opens += c.opens;
      total.clicks += c.clicks;
      total.purchases += c.purchases;
      for (const [currency, cents] of c.cents) {
        total.cents.set(currency, (total.cents.get(currency) ?? 0) + cents);
      }
      for (const [currency, n] of c.paid)
        total.paid.set(currency, (total.paid.get(currency) ?? 0) + n);
    }
    // Every round of the export is one campaign_metrics listed for the window.
    expect([...csv.keys()].every((id) => own.some((t) => t._id === id))).toBe(true);
    if (campaign.rounds_aggregating === 0) {
      out.campaignsWhole++;
      expect(campaign).toMatchObject({
        task_count: csv.size,
        sent_count: total.sent,
        received_count: total.received,
        open_count: total.opens,
        click_count: total.clicks,
        purchase_count: total.purchases,
      });
      expect(
        Object.fromEntries(
          Object.entries(campaign.revenue).map(([k, v]) => [k, Math.round(v * 100)]),
        ),
      ).toEqual(total.cents.has("KRW") ? { KRW: total.cents.get("KRW") } : {});
    }
    // summarize_export of the same file states how campaign_metrics counts its payments.
    const summary = await h.call("summarize_export", {
      job_id: (exported.structured.job as { _id: string })._id,
      lang: "en",
    });
    expect(summary.isError, summary.text).toBeFalsy();
    const notes = summary.structured.vs_campaign_metrics as string[];
    expect(summary.text).toContain(
      "An export holds only the rounds whose performance aggregation had finished, so its counts may differ from campaign_metrics.",
    );
    const others = [...total.paid.entries()].filter(([currency]) => currency !== "KRW");
    if (others.length > 0) {
      out.nonKrwPurchases += others.reduce((sum, [, n]) => sum + n, 0);
      const allConversions = [...total.paid.values()].reduce((a, b) => a + b, 0);
      expect(notes[0]).toContain(
        `counts all ${allConversions.toLocaleString("en-US")} conversions as purchases`,
      );
      for (const [currency, n] of others) {
        const amount = ((total.cents.get(currency) ?? 0) / 100).toFixed(2);
        expect(notes[0]).toContain(`${amount} ${currency} (${n})`);
      }
      expect(summary.text).toContain(`**Against campaign_metrics**: ${notes.join(" ")}`);
    } else {
      expect(notes).toEqual([]);
      expect(summary.text).not.toContain("Against campaign_metrics");
    }
  }
  return out;
}

/** A sandbox clock the test moves 10 minutes on every 10th export, past the service's rate limit. */
function pacedHarness(
  build: (sandboxClock: () => number) => Promise<RunningSandbox>,
  env: Record<string, string> = {},
) {
  let shift = 0;
  let creates = 0;
  const clock = sandboxClock(() => shift);
  return {
    start: async () => {
      const sandbox = await build(clock.real);
      const h = await startHarness({
        sandbox,
        apiNow: clock.now,
        env: { CRM_EXPORT_BUDGET: "1000/600", ...env },
      });
      return { sandbox, h };
    },
    nextCreate: () => {
      creates++;
      if (creates % 10 === 0) shift += 601_000;
    },
  };
}

describe("campaign_metrics and the CSV export of the same window (app in KST)", () => {
  const paced = pacedHarness((clock) => startSandbox({ now: SANDBOX_NOW, jobSeconds: 0.2, clock }));
  let sandbox: RunningSandbox;
  let h: Harness;
  beforeAll(async () => {
    ({ sandbox, h } = await paced.start());
  });
  afterAll(async () => {
    await h?.close();
    await sandbox?.close();
  });

  it("agree round by round for every campaign of a month of aggregated rounds; payments in USD are stated, not added", {
    timeout: 120_000,
  }, async () => {
    const r = await compareWindow(
      h,
      { task_from: "2026-09-25", task_to: "2026-10-27" },
      { from: "2026-09-25", to: "2026-10-27" },
      paced.nextCreate,
    );
    expect(r.campaigns).toBeGreaterThanOrEqual(10);
    expect(r.exported).toBe(r.campaigns - r.failed);
    expect(r.failed).toBeLessThanOrEqual(1);
    expect(r.notReady).toBe(0);
    expect(r.tasksMissingAggregating).toBe(0);
    expect(r.tasksCompared).toBeGreaterThan(100);
    // Campaign totals are compared too, for the campaigns whose every round is in the export.
    expect(r.campaignsWhole).toBeGreaterThan(0);
    // The window holds purchases paid in USD: the rule that keeps them out of revenue is stated.
    expect(r.nonKrwPurchases).toBeGreaterThan(0);
    expect(r.vsExport).toHaveLength(1);
    expect(r.vsExport[0]).toContain("adds no payment made in another currency");
    expect(r.metricsText).toContain(`Against a CSV export of this window: ${r.vsExport[0]}`);
  });

  it("agree on the recent rounds an export holds; the rounds it lacks are the ones flagged aggregating", {
    timeout: 120_000,
  }, async () => {
    const r = await compareWindow(
      h,
      { task_from: "2026-11-17", task_to: "2026-11-22" },
      { from: "2026-11-17", to: "2026-11-22" },
      paced.nextCreate,
    );
    expect(r.campaigns).toBeGreaterThanOrEqual(5);
    expect(r.exported).toBeGreaterThan(0);
    expect(r.notReady).toBeGreaterThan(0);
    expect(r.tasksMissingAggregating).toBeGreaterThan(0);
    expect(r.tasksCompared).toBeGreaterThan(0);
    const note = r.vsExport.find((n) => n.includes("may still be aggregating"));
    expect(note).toContain("an export holds only rounds whose aggregation had finished");
    expect(r.metricsText).toContain(note);
  });
});

describe("campaign_metrics and the CSV export of the same window (app in UTC)", () => {
  // The server reads dates in the application's zone, as its configuration says.
  const paced = pacedHarness(
    (clock) =>
      startSandbox({
        now: SANDBOX_NOW,
        jobSeconds: 0.2,
        clock,
        world: { ...createWorld({ seed: 42, now: Date.parse(SANDBOX_NOW) }), timeZone: "UTC" },
      }),
    { CRM_TIME_ZONE: "UTC" },
  );
  let sandbox: RunningSandbox;
  let h: Harness;
  beforeAll(async () => {
    ({ sandbox, h } = await paced.start());
  });
  afterAll(async () => {
    await h?.close();
    await sandbox?.close();
  });

  it("names the KST hours an export of the window's dates covers, and that window agrees with the export", {
    timeout: 120_000,
  }, async () => {
    const window = { task_from: "2026-10-10", task_to: "2026-10-16" };
    const first = await h.call("campaign_metrics", window);
    const vsExport = first.structured.vs_export as string[];
    const dates = vsExport.find((n) => n.startsWith("Dates:"));
    // 2026-10-10 00:00 KST is 2026-10-09 in UTC: the export of these dates starts 9 hours earlier.
    expect(dates).toContain(
      "2026-10-09 to 2026-10-16 covers 2026-10-09 09:00 – 2026-10-17 09:00 KST",
    );
    expect(first.text).toContain(dates);
    const written = /campaign_metrics (\{[^}]*\})/.exec(must(dates, "Dates: note"))?.[1];
    const call = JSON.parse(must(written, "campaign_metrics call in the Dates: note")) as {
      task_from: string;
      task_to: string;
    };
    const r = await compareWindow(
      h,
      call,
      { from: "2026-10-09", to: "2026-10-16" },
      paced.nextCreate,
    );
    expect(r.exported).toBeGreaterThanOrEqual(5);
    expect(r.tasksMissingAggregating).toBe(0);
    // The covering window is whole UTC days, which the export reads exactly: no dates note.
    expect(r.vsExport.some((n) => n.startsWith("Dates:"))).toBe(false);
  });
});
