import { readFile, writeFile } from "node:fs/promises";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { must } from "../helpers/must.js";
import { type Harness, startHarness, type ToolResult, toResult } from "../helpers/tool-harness.js";
import { waitUntil } from "../helpers/wait-until.js";

/**
 * The history as the server feeds it: a file the server downloads is added in the background,
 * check_export says where it stands, and a server started after one that never added its files
 * (killed, or run with CRM_HISTORY=off) adds them, refusing a cut file with a clear error.
 */

let h: Harness;
let campaignIds: string[];
beforeAll(async () => {
  h = await startHarness({ env: { CRM_EXPORT_BUDGET: "20/600" } });
  campaignIds = h.sandbox.world.campaigns
    .filter((c) => c.role === "normal" && c.tasks.length === 1 && c.tasks.some((t) => t.aggregated))
    .map((c) => c._id);
});
afterAll(async () => {
  await h?.close();
});

async function callOn(client: Client, name: string, args: Record<string, unknown>) {
  return toResult(await client.callTool({ name, arguments: args }));
}

async function exportCampaign(
  client: Client,
  campaignId: string,
): Promise<{ jobId: string; path: string }> {
  const r = await callOn(client, "start_export", {
    type: "campaign_event_data",
    campaign_id: campaignId,
    wait_seconds: 50,
  });
  expect(r.isError, r.text).toBeFalsy();
  return {
    jobId: (r.structured.job as { _id: string })._id,
    path: must(r.structured.file_path as string | undefined, "file_path of a finished export"),
  };
}

/** check_export until the job's history status is one of `wanted`. */
async function historyStatusOf(
  client: Client,
  jobId: string,
  wanted: string[],
): Promise<ToolResult> {
  let last: ToolResult | undefined;
  await waitUntil(
    async () => {
      last = await callOn(client, "check_export", { job_id: jobId, wait_seconds: 0 });
      const status = (last.structured.history as { status?: string } | undefined)?.status;
      return status !== undefined && wanted.includes(status);
    },
    `job ${jobId} to be ${wanted.join(" or ")} in the history`,
  );
  return must(last, "check_export's result");
}

describe("the history fed by the server's downloads", () => {
  it("adds a downloaded export in the background, each of its rounds once", async () => {
    const campaignId = must(campaignIds[0], "a one-round campaign");
    const { jobId } = await exportCampaign(h.client, campaignId);
    const checked = await historyStatusOf(h.client, jobId, ["kept", "failed"]);
    expect(checked.structured.history).toEqual({ status: "kept" });

    const summary = await h.call("summarize_export", { job_id: jobId });
    const rounds = (summary.structured.rounds as unknown[]).length;
    const history = must(await h.runtime.history.history(), "the history (on by default)");
    const kept = await history.keptRounds(campaignId);
    expect(kept.map((r) => r.job_id)).toEqual(Array(rounds).fill(jobId));
    expect((await history.campaigns()).map((c) => c.campaign_id)).toContain(campaignId);
  });

  it("a later server adds what an earlier one downloaded, and refuses a cut file", async () => {
    const off = await h.restart({ CRM_HISTORY: "off" });
    const whole = await exportCampaign(off, must(campaignIds[1], "a second campaign"));
    const cut = await exportCampaign(off, must(campaignIds[2], "a third campaign"));
    const offCheck = await callOn(off, "check_export", { job_id: whole.jobId, wait_seconds: 0 });
    expect(offCheck.structured.history).toBeUndefined();

    const text = await readFile(cut.path, "utf8");
    await writeFile(cut.path, text.slice(0, text.lastIndexOf("\n", text.length - 2) + 20));

    const later = await h.restart();
    const added = await historyStatusOf(later, whole.jobId, ["kept", "failed"]);
    expect(added.structured.history).toEqual({ status: "kept" });
    const refused = await historyStatusOf(later, cut.jobId, ["kept", "failed"]);
    const history = refused.structured.history as { status: string; error: string };
    expect(history.status).toBe("failed");
    expect(history.error).toMatch(/cannot be added to the history: line \d+: .*cut short/);
    expect(refused.text).toContain("Not added to the history of exports");
    const held = must(await h.runtime.history.history(), "the history");
    expect((await held.catalogue()).exports.map((e) => e.job_id)).not.toContain(cut.jobId);

    // What the error says to do: the same export again with force, a new job whose file is kept.
    expect(history.error).toContain("start_export with the same arguments and force: true");
    const again = await callOn(later, "start_export", {
      type: "campaign_event_data",
      campaign_id: campaignIds[2],
      force: true,
      wait_seconds: 50,
    });
    expect(again.isError, again.text).toBeFalsy();
    const againId = (again.structured.job as { _id: string })._id;
    expect(againId).not.toBe(cut.jobId);
    const kept = await historyStatusOf(later, againId, ["kept", "failed"]);
    expect(kept.structured.history).toEqual({ status: "kept" });
  });
});
