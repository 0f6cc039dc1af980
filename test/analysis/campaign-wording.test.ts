import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type CampaignSummary,
  renderSummaryMarkdown,
  summarizeFile,
} from "../../src/analysis/index.js";
import { HEADER, toCsv } from "./campaign-fixture.js";

/** What the campaign text says and on which base: send groups apart from the control group. */

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "campaign-wording-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

type Row = string[];
const ev = (
  type: string,
  user: string,
  opts: { at?: string; group?: string; props?: string; error?: [string, string] } = {},
): Row => [
  "t1",
  opts.at ?? "2025-03-01 10:00:00",
  opts.group ?? "그룹A",
  type,
  "",
  user,
  opts.at ?? "2025-03-01 10:00:00",
  type.startsWith("message_") || type === "control_assigned" ? "sms" : "",
  opts.error?.[0] ?? "",
  opts.error?.[1] ?? "",
  opts.props ?? "{}",
  "{}",
  "{}",
];

async function campaign(name: string, rows: Row[]): Promise<CampaignSummary> {
  const path = join(dir, name);
  await writeFile(path, toCsv(rows, "\n"));
  const r = await summarizeFile(path, {});
  if (r.kind !== "campaign_event_data") throw new Error("wrong kind");
  return r;
}

/**
 * One task at 2025-03-01 10:00 split into 그룹A, 그룹B and 대조군: 10 users per send group
 * received, 4 opened in A and 2 in B; 2 A openers and 1 B opener bought for 1,000 KRW each;
 * 3 control users bought for 50,000 KRW each. A second round on 2025-03-08 sends one message.
 */
function abRows(controlUsers = 6, controlBuyers = 3): Row[] {
  const rows: Row[] = [HEADER];
  const buy = (amount: number) => JSON.stringify({ revenue: amount, currency: "KRW" });
  for (const [group, openers, buyers] of [
    ["그룹A", 4, 2],
    ["그룹B", 2, 1],
  ] as const) {
    for (let i = 0; i < 10; i++) {
      const u = `${group}-${i}`;
      rows.push(ev("message_sent", u, { group }), ev("message_received", u, { group }));
      if (i < openers) rows.push(ev("app_push_opened", u, { group }));
      if (i < buyers) rows.push(ev("purchase", u, { group, props: buy(1000) }));
    }
  }
  for (let i = 0; i < controlUsers; i++) {
    const u = `ctl-${i}`;
    rows.push(ev("control_assigned", u, { group: "대조군" }));
    if (i < controlBuyers) rows.push(ev("purchase", u, { group: "대조군", props: buy(50_000) }));
  }
  const later = "2025-03-08 10:00:00";
  rows.push(
    ev("message_sent", "late", { at: later }),
    ev("message_received", "late", { at: later }),
  );
  return rows;
}

describe("campaign text on one base", () => {
  it("headlines send-group conversions and reports the control group apart", async () => {
    const r = await campaign("ab.csv", abRows());
    // Contract fields unchanged: every conversion row.
    expect(r.totals.conversions).toBe(2 + 1 + 3);
    expect(r.totals.send_group_conversions).toBe(3);
    expect(r.totals.send_group_conversion_users).toBe(3);
    expect(r.totals.control_conversions).toBe(3);
    // 3 send-group conversions over 6 opens.
    expect(r.totals.conversion_rate).toBe(0.5);
    const text = renderSummaryMarkdown(r);
    expect(text).toContain("Send groups: 3 conversions by 3 users, 50.0% of opens.");
    expect(text).toContain("Control group (sent no message): 3 conversions, not in that rate.");
    expect(text).not.toMatch(/\b6 conversions by/);
    // Revenue is summed over all rows; the text says that the control group is in it.
    expect(text).toContain("153,000 KRW (6 conversions, all groups incl. control)");
    expect(r.revenue.note).toMatch(/the control group's 3 included/);
    expect(r.summary).toContain(
      "3 send-group conversions (50.0% of opens) + 3 in the control group",
    );
  });

  it("counts a round split into groups once, gives its span, and no open rate for control", async () => {
    const r = await campaign("rounds.csv", abRows());
    // The contract's rounds[] stays one per task_id + scheduled_at + group.
    expect(r.rounds).toHaveLength(4);
    expect(r.schedule).toEqual({
      send_rounds: 2,
      groups: ["그룹A", "그룹B", "대조군"],
      first_scheduled_at: "2025-03-01 10:00:00",
      last_scheduled_at: "2025-03-08 10:00:00",
    });
    const text = renderSummaryMarkdown(r);
    expect(text).toContain(
      "(60 rows, 2 send rounds (3 groups incl. control), scheduled 2025-03-01 10:00:00 to 2025-03-08 10:00:00)",
    );
    expect(text).toMatch(/only the rounds whose performance aggregation had finished/);
    expect(text).toMatch(/over the whole file each user counts once/);
    const controlLine = text.split("\n").find((l) => l.includes("대조군") && l.startsWith("|"));
    expect(controlLine).toMatch(/\| n\/a +\|/);
    expect(text).not.toMatch(/round\(s\)/);
  });

  it("formats the one-line summary's counts with digit groups", async () => {
    const rows: Row[] = [HEADER];
    for (let i = 0; i < 1200; i++) rows.push(ev("message_sent", `u${i}`));
    const r = await campaign("big.csv", rows);
    expect(r.summary).toMatch(/^1,200 rows, 1 send round; 1,200 sent, /);
    expect(r.summary).toContain("1,200 unsettled");
  });

  it("quotes a sample carrier message as a JSON string, its own quotes escaped", async () => {
    const rows: Row[] = [HEADER, ev("message_sent", "u1")];
    rows.push(ev("message_failed", "u1", { error: ["E100", '"SS000000" rejected'] }));
    const r = await campaign("sample.csv", rows);
    expect(r.failures[0]?.sample_message).toBe('"SS000000" rejected');
    const text = renderSummaryMarkdown(r);
    expect(text).toContain('"\\"SS000000\\" rejected"');
    expect(text).not.toContain('""SS000000"');
  });

  it("starts the control verdict with a capital letter when the send groups lead", async () => {
    const r = await campaign("verdict.csv", abRows(30, 1));
    const verdict = r.ab_test.control?.comparison?.verdict ?? "";
    // 3 of 21 received send-group users (20 in the A/B round, 1 in the later one) converted
    // vs 1 of 30 control users.
    expect(r.ab_test.control?.send_groups_conversion_rate).toBeCloseTo(3 / 21, 6);
    expect(r.ab_test.control?.conversion_rate).toBeCloseTo(1 / 30, 6);
    expect(verdict).toMatch(
      /^Send groups have a higher conversion rate per user than 대조군 \(14\.3% vs 3\.3%\)/,
    );
    expect(renderSummaryMarkdown(r)).not.toMatch(/send groups have/);
  });
});
