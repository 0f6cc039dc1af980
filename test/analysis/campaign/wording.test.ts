import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type CampaignSummary,
  renderSummaryMarkdown,
  summarizeFile,
} from "../../../src/analysis/index.js";
import { must } from "../../helpers/must.js";
import { HEADER, toCsv } from "./fixture.js";

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
  opts: {
    task?: string;
    at?: string;
    group?: string;
    props?: string;
    error?: [string, string];
  } = {},
): Row => [
  opts.task ?? "t1",
  opts.at ?? "2025-03-01 10:00:00",
  opts.group ?? "그룹A",
  type,
  "",
  user,
  opts.at ?? "2025-03-01 10:00:00",
  type.startsWith("message_") || type === "control_assigned" ? "sms" : "",
  ...(opts.error ?? ["", ""]),
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
    // Revenue: the send groups' 3 x 1,000 KRW headlined, the control's 3 x 50,000 KRW apart.
    expect(text).toContain(
      "**Revenue** (send groups): 3,000 KRW (3 conversions). Control group 대조군 (sent no message), not in that sum: 150,000 KRW (3 conversions).",
    );
    expect(text).not.toMatch(/153,000|all groups incl\. control/);
    // by_currency keeps every conversion row; the note says so.
    expect(r.revenue.by_currency).toEqual([{ currency: "KRW", amount: 153_000, conversions: 6 }]);
    expect(r.revenue.note).toMatch(/the control group's 3 included/);
    expect(r.summary).toContain(
      "3 send-group conversions (50.0% of opens) + 3 in the control group",
    );
  });

  it("keeps revenue per currency apart for send groups and the control group", async () => {
    const pay = (amount: number | string, currency: string) => JSON.stringify({ amount, currency });
    const rows: Row[] = [HEADER];
    // Round t1: 그룹A, 그룹B and 대조군; round t2: one unnamed group and 대조군 again.
    const t2 = { task: "t2", at: "2025-03-02 10:00:00" };
    for (const [group, u] of [
      ["그룹A", "a1"],
      ["그룹B", "b1"],
    ] as const) {
      rows.push(ev("message_sent", u, { group }), ev("message_received", u, { group }));
      rows.push(ev("app_push_opened", u, { group }));
    }
    rows.push(
      ev("purchase", "a1", { group: "그룹A", props: pay(1200, "KRW") }),
      ev("purchase", "a1", { group: "그룹A", props: pay("3300", "krw") }),
      ev("purchase", "a1", { group: "그룹A", props: pay(2.5, "USD") }),
      ev("purchase", "b1", { group: "그룹B", props: pay(10.25, "USD") }),
      ev("control_assigned", "c1", { group: "대조군" }),
      ev("purchase", "c1", { group: "대조군", props: pay(40_000, "KRW") }),
      ev("purchase", "c1", { group: "대조군", props: pay(4, "USD") }),
      ev("purchase", "b1", { group: "그룹B", props: pay(500, "KRW") }),
      ev("message_sent", "e1", { ...t2, group: "" }),
      ev("purchase", "e1", { ...t2, group: "", props: pay(7000, "KRW") }),
      ev("control_assigned", "c2", { ...t2, group: "대조군" }),
      ev("purchase", "c2", { ...t2, group: "대조군", props: pay(60_000, "KRW") }),
      // A control conversion without an amount: counted as a conversion, adds no revenue.
      ev("purchase", "c3", { ...t2, group: "대조군" }),
    );
    const r = await campaign("revenue-groups.csv", rows);
    expect(r.totals.send_group_conversions).toBe(6);
    expect(r.totals.control_conversions).toBe(4);
    // Send groups: KRW 1,200 + 3,300 + 500 + 7,000; USD 2.5 + 10.25.
    expect(r.revenue.send_group_by_currency).toEqual([
      { currency: "KRW", amount: 12_000, conversions: 4 },
      { currency: "USD", amount: 12.75, conversions: 2 },
    ]);
    // Control group: KRW 40,000 + 60,000; USD 4.
    expect(r.revenue.control_by_currency).toEqual([
      { currency: "KRW", amount: 100_000, conversions: 2 },
      { currency: "USD", amount: 4, conversions: 1 },
    ]);
    // The file-wide sums are unchanged: both groups together.
    expect(r.revenue.by_currency).toEqual([
      { currency: "KRW", amount: 112_000, conversions: 6 },
      { currency: "USD", amount: 16.75, conversions: 3 },
    ]);
    const text = renderSummaryMarkdown(r);
    expect(text).toContain(
      "**Revenue** (send groups): 12,000 KRW (4 conversions), 12.75 USD (2 conversions). Control group 대조군 (sent no message), not in that sum: 100,000 KRW (2 conversions), 4 USD (1 conversion).",
    );
  });

  it("headlines revenue without a group split when the control group has no conversions", async () => {
    const r = await campaign("revenue-no-control.csv", abRows(4, 0));
    expect(r.revenue.control_by_currency).toEqual([]);
    expect(r.revenue.send_group_by_currency).toEqual(r.revenue.by_currency);
    const text = renderSummaryMarkdown(r);
    expect(text).toContain("**Revenue**: 3,000 KRW (3 conversions).");
    expect(text).not.toMatch(/Revenue\*\* \(send groups\)/);
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
    const verdict = must(r.ab_test.control?.comparison?.verdict, "verdict");
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
