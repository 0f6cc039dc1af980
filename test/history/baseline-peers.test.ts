import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type BaselineRequest,
  type CampaignRates,
  campaignBaseline,
} from "../../src/history/baseline.js";
import {
  type CsvRow,
  type HistoryFixture,
  historyFixture,
  userRows,
  writeCampaignCsv,
} from "./fixtures.js";

/**
 * Which campaigns a baseline is drawn from and what their rates are, on a history of real CSV
 * files: the same channel mix only, never the campaign itself (by id, task or file), the most
 * recent first up to the limit, and the rates by summarize_export's rules (a control-group
 * conversion has no open behind it and is not counted).
 */

const CONTROL = "대조군";
let f: HistoryFixture;
/** push_k: one app_push round on 2026-10-0k; push_3 also has a control group that converts. */
const paths = new Map<string, string>();

/**
 * Four users sent to: three received, one failed; of the received, `openers` opened (u1 first),
 * u1 clicked the landing page and bought.
 */
function pushRound(k: number, openers: number, channel = "app_push"): CsvRow[] {
  const round = { task: `t_push_${k}`, at: `2026-10-0${k} 10:00:00` };
  const rows: CsvRow[] = [];
  for (const [i, user] of ["u1", "u2", "u3"].entries()) {
    const opened = i < openers ? ["push_opened"] : [];
    const bought = user === "u1" ? ["landing_clicked", "purchase"] : [];
    rows.push(
      ...userRows(round, user, ["message_sent", "message_received", ...opened, ...bought], channel),
    );
  }
  rows.push(...userRows(round, "u4", ["message_sent", "message_failed"], channel));
  return rows;
}

function controlRound(k: number): CsvRow[] {
  const round = { task: `t_push_${k}`, at: `2026-10-0${k} 10:00:00`, group: CONTROL };
  const rows = userRows(round, "u9", ["control_assigned", "purchase"]);
  return rows.map((r) => (r.event_type === "control_assigned" ? { ...r, channel: "control" } : r));
}

async function add(campaignId: string, rows: CsvRow[], day: number): Promise<void> {
  const path = await writeCampaignCsv(join(f.dir, `${campaignId}.csv`), rows);
  paths.set(campaignId, path);
  await f.history.ingestCampaignExport({
    path,
    jobId: `job_${campaignId}`,
    campaignId,
    window: {},
    jobCreatedAt: `2026-11-0${day}T00:00:00Z`,
  });
}

beforeAll(async () => {
  f = await historyFixture();
  for (const k of [1, 2, 3, 4, 5]) {
    await add(
      `push_${k}`,
      [...pushRound(k, Math.min(k - 1, 3)), ...(k === 3 ? controlRound(3) : [])],
      k,
    );
  }
  // A campaign that fell back to SMS for one user: its mix is app_push+sms.
  const mixed = pushRound(6, 1);
  await add(
    "mixed",
    [
      ...mixed.slice(0, -2),
      ...userRows(
        { task: "t_push_6", at: "2026-10-06 10:00:00" },
        "u4",
        ["message_sent", "message_received"],
        "sms",
      ),
    ],
    6,
  );
});
afterAll(async () => {
  await f?.close();
});

const values: CampaignRates = {
  delivery: 0.75,
  open: 0.5,
  click: 0.2,
  conversion: 0.5,
  failure: 0.3,
};

function request(over: Partial<BaselineRequest>): BaselineRequest {
  return {
    channels: ["app_push"],
    values,
    taskIds: [],
    limits: { memoryMb: 256, threads: 1, timeoutSeconds: 30 },
    spillParent: f.dir,
    maxCampaigns: 3,
    ...over,
  };
}

describe("campaignBaseline", () => {
  it("the last campaigns of the channel but itself, with their rates by the summary's rules", async () => {
    const answer = await campaignBaseline(f.history, request({ campaignId: "push_5" }));
    expect(answer.status).toBe("ready");
    // push_4, push_3 and push_2: the three most recent after push_5 (push_1 is older, mixed
    // is another mix). Opens over received 1/3, 2/3 and 3/3.
    expect(answer).toEqual({
      status: "ready",
      baseline: {
        channel: "app_push",
        campaigns: 3,
        window: { from: "2026-10-02", to: "2026-10-04" },
        metrics: {
          delivery: { value: 0.75, median: 0.75, p25: 0.75, p75: 0.75, flag: null },
          open: { value: 0.5, median: 0.666667, p25: 0.5, p75: 0.833333, flag: null },
          click: { value: 0.2, median: 0.333333, p25: 0.333333, p75: 0.333333, flag: "below" },
          // One purchase over 1, 2 and 3 opens: push_3's control-group purchase is not counted.
          conversion: { value: 0.5, median: 0.5, p25: 0.416667, p75: 0.75, flag: null },
          failure: { value: 0.3, median: 0.25, p25: 0.25, p75: 0.25, flag: "above" },
        },
      },
    });
  });

  it("knows the campaign by a task of its file, or by the file itself, as by its id", async () => {
    const byId = await campaignBaseline(f.history, request({ campaignId: "push_5" }));
    const byTask = await campaignBaseline(f.history, request({ taskIds: ["t_push_5"] }));
    const byFile = await campaignBaseline(f.history, request({ sourcePath: paths.get("push_5") }));
    expect(byTask).toEqual(byId);
    expect(byFile).toEqual(byId);
  });

  it("a campaign unknown to the history is compared with the most recent of its channel", async () => {
    const answer = await campaignBaseline(f.history, request({ campaignId: "elsewhere" }));
    expect(answer.status === "ready" && answer.baseline.window).toEqual({
      from: "2026-10-03",
      to: "2026-10-05",
    });
  });

  it("a channel mix is compared with the same mix only, and says how many more it needs", async () => {
    const mix = await campaignBaseline(
      f.history,
      request({ channels: ["sms", "app_push"], campaignId: "another" }),
    );
    expect(mix).toEqual({ status: "too_few", channel: "app_push+sms", campaigns: 1, needed: 2 });
    const itself = await campaignBaseline(
      f.history,
      request({ channels: ["sms", "app_push"], campaignId: "mixed" }),
    );
    expect(itself).toEqual({ status: "too_few", channel: "app_push+sms", campaigns: 0, needed: 3 });
    const email = await campaignBaseline(f.history, request({ channels: ["email"] }));
    expect(email).toEqual({ status: "too_few", channel: "email", campaigns: 0, needed: 3 });
  });
});
