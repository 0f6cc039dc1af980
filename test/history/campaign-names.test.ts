import type { Client } from "@modelcontextprotocol/client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { keptCampaignName, MAX_CAMPAIGN_NAME_CHARS } from "../../src/history/campaign-names.js";
import { startSandbox } from "../../src/sandbox/index.js";
import type { RunningSandbox } from "../../src/sandbox/types.js";
import { createWorld } from "../../src/sandbox/world/index.js";
import type { SandboxCampaign } from "../../src/sandbox/world/types.js";
import { untilKept } from "../helpers/history-kept.js";
import { must } from "../helpers/must.js";
import {
  type Harness,
  SANDBOX_NOW,
  startHarness,
  type ToolResult,
  toResult,
} from "../helpers/tool-harness.js";
import { waitUntil } from "../helpers/wait-until.js";

/**
 * `history_campaigns.name` for exports the server adds: the file and the job name no campaign,
 * so the server takes the name from a campaign_metrics answer it already had, else asks once for
 * a window around the campaign's newest round; a failed request never fails the addition (the
 * name stays NULL) and a later server start fills it. Names are text from outside: kept without
 * control or direction-override characters, and bounded.
 */

/** A name with a line break, a table pipe, a right-to-left override and far too many letters. */
const HOSTILE_NAME = `쿠폰\n| 발송 |\u202e드러남\u0000 ${"가".repeat(5000)}`;

let h: Harness;
let sandbox: RunningSandbox;
/** One-round campaigns, aggregated: each test exports its own. */
let campaigns: SandboxCampaign[];

beforeAll(async () => {
  const real = createWorld({ seed: 42, now: Date.parse(SANDBOX_NOW) });
  const oneRound = real.campaigns.filter(
    (c) => c.role === "normal" && c.tasks.length === 1 && c.tasks[0]?.aggregated,
  );
  const hostile = must(oneRound[3], "a fourth one-round campaign");
  // The service names this campaign with hostile text in every campaign_metrics answer.
  sandbox = await startSandbox({
    now: SANDBOX_NOW,
    jobSeconds: 0.3,
    world: {
      ...real,
      campaignMetrics: (from, to, scheduleType) => {
        const answer = real.campaignMetrics(from, to, scheduleType);
        return {
          campaigns: answer.campaigns.map((c) =>
            c._id === hostile._id ? { ...c, name: HOSTILE_NAME } : c,
          ),
        };
      },
    },
  });
  h = await startHarness({ sandbox, env: { CRM_EXPORT_BUDGET: "20/600" } });
  campaigns = oneRound;
}, 60_000);
afterEach(() => {
  sandbox?.faults.clear();
});
afterAll(async () => {
  await h?.close();
  await sandbox?.close();
});

async function callOn(client: Client, name: string, args: Record<string, unknown>) {
  return toResult(await client.callTool({ name, arguments: args }));
}

/** start_export of the whole campaign, then check_export until the history keeps it. */
async function exportAndKeep(client: Client, campaignId: string): Promise<string> {
  const started = await callOn(client, "start_export", {
    type: "campaign_event_data",
    campaign_id: campaignId,
    wait_seconds: 50,
  });
  expect(started.isError, started.text).toBeFalsy();
  const jobId = (started.structured.job as { _id: string })._id;
  await untilKept((args) => callOn(client, "check_export", args), jobId);
  return jobId;
}

async function nameInHistory(client: Client, campaignId: string): Promise<unknown> {
  const r: ToolResult = await callOn(client, "query_export", {
    history: true,
    sql: `SELECT name FROM history_campaigns WHERE campaign_id = '${campaignId}'`,
  });
  expect(r.isError, r.text).toBeFalsy();
  const rows = r.structured.rows as unknown[][];
  expect(rows).toHaveLength(1);
  return rows[0]?.[0];
}

const metricsRequests = () => sandbox.faults.requestCounts.campaign_metrics;

describe("history_campaigns.name for exports the server adds", () => {
  it("asks campaign_metrics once for a campaign it has not seen", async () => {
    const campaign = must(campaigns[0], "a one-round campaign");
    const before = metricsRequests();
    await exportAndKeep(h.client, campaign._id);
    expect(metricsRequests() - before).toBe(1);
    expect(await nameInHistory(h.client, campaign._id)).toBe(campaign.name);
  });

  it("takes the name from an earlier campaign_metrics answer, asking nothing more", async () => {
    const campaign = must(campaigns[1], "a second one-round campaign");
    const day = new Date(must(campaign.tasks[0], "its round").scheduled_at + 9 * 3_600_000)
      .toISOString()
      .slice(0, 10);
    const metrics = await h.call("campaign_metrics", {
      task_from: day,
      task_to: day,
      campaign_ids: [campaign._id],
    });
    expect(metrics.isError, metrics.text).toBeFalsy();
    const before = metricsRequests();
    await exportAndKeep(h.client, campaign._id);
    expect(metricsRequests()).toBe(before);
    expect(await nameInHistory(h.client, campaign._id)).toBe(campaign.name);
  });

  it("keeps the export when the lookup fails, and a later server names the campaign", async () => {
    const campaign = must(campaigns[2], "a third one-round campaign");
    // Every campaign_metrics request fails (the client's retries included) until cleared.
    sandbox.faults.inject({
      operation: "campaign_metrics",
      action: { type: "status", status: 500 },
      times: 1000,
    });
    const before = metricsRequests();
    await exportAndKeep(h.client, campaign._id);
    expect(metricsRequests()).toBeGreaterThan(before);
    expect(await nameInHistory(h.client, campaign._id)).toBeNull();

    sandbox.faults.clear();
    const later = await h.restart();
    // Any call that reaches the service starts the later server's catch-up (here: a day
    // without the campaign's round, so the answer itself cannot name it).
    const other = await callOn(later, "campaign_metrics", {
      task_from: "2024-01-01",
      task_to: "2024-01-01",
    });
    expect(other.isError, other.text).toBeFalsy();
    await waitUntil(
      async () => (await nameInHistory(later, campaign._id)) === campaign.name,
      "the later server to name the campaign",
      { intervalMs: 200 },
    );
  });

  it("keeps a hostile name without control characters, overrides or its excess length", async () => {
    const campaign = must(campaigns[3], "the campaign the service names with hostile text");
    await exportAndKeep(h.client, campaign._id);
    const name = await nameInHistory(h.client, campaign._id);
    expect(name).toBe(keptCampaignName(HOSTILE_NAME));
    expect(typeof name).toBe("string");
    const text = name as string;
    expect(text.startsWith("쿠폰 | 발송 | 드러남 가가")).toBe(true);
    expect([...text]).toHaveLength(MAX_CAMPAIGN_NAME_CHARS);
    expect(text.endsWith("…")).toBe(true);
    expect(text).not.toMatch(/[\p{Cc}\u202e]/u);
    // The description's table keeps the name on one row, its pipe escaped.
    const described = await h.call("query_export", { history: true });
    const row = must(
      described.text.split("\n").find((l) => l.startsWith(`|${campaign._id}|`)),
      "the campaign's row in the description",
    );
    expect(row).toContain("쿠폰 \\| 발송 \\| 드러남");
  });
});

describe("keptCampaignName", () => {
  it("leaves an ordinary name as it is and gives null for nothing", () => {
    expect(keptCampaignName("[대용량] #{고객명}님 쿠폰")).toBe("[대용량] #{고객명}님 쿠폰");
    expect(keptCampaignName("  \u0007\u2066 ")).toBeNull();
    expect(keptCampaignName(null)).toBeNull();
    expect(keptCampaignName(undefined)).toBeNull();
  });

  it("cuts by characters, never inside a surrogate pair", () => {
    const kept = must(keptCampaignName("😀".repeat(MAX_CAMPAIGN_NAME_CHARS + 1)), "a name");
    expect([...kept]).toHaveLength(MAX_CAMPAIGN_NAME_CHARS);
    expect(kept).toBe(`${"😀".repeat(MAX_CAMPAIGN_NAME_CHARS - 1)}…`);
  });
});
