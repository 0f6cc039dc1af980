import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  campaignSummaryOutputSchema,
  renderSummaryMarkdown,
  summarizeFile,
} from "../../../src/analysis/index.js";
import type { CampaignSummary } from "../../../src/analysis/schemas.js";
import { must } from "../../helpers/must.js";
import { campaignRows, eventRow, HEADER, toCsv } from "./fixture.js";

type Row = Record<string, string>;

let dir: string;
let file: string;
let rows: Row[];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "campaign-summary-"));
  file = join(dir, "campaign.csv");
  await writeFile(file, toCsv(campaignRows(7), "\r\n"));
  // The oracle reads the same bytes with csv-parse, independently of our scanner.
  const { readFile } = await import("node:fs/promises");
  rows = parse(await readFile(file), { columns: true }) as Row[];
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const SEND_TYPES = new Set([
  "message_sent",
  "message_received",
  "message_failed",
  "control_assigned",
]);
const isOpen = (t: string) =>
  (t.endsWith("_opened") || t.endsWith("_clicked")) && t !== "landing_clicked";
const isConversion = (t: string) => !SEND_TYPES.has(t) && !isOpen(t) && t !== "landing_clicked";
const userOf = (r: Row): string | null =>
  r.platform_user_id ? `p:${r.platform_user_id}` : r.user_id ? `u:${r.user_id}` : null;

function expectedCounts(subset: Row[]) {
  const users = (pred: (r: Row) => boolean) =>
    new Set(
      subset
        .filter(pred)
        .map(userOf)
        .filter((u) => u !== null),
    ).size;
  const count = (pred: (r: Row) => boolean) => subset.filter(pred).length;
  const sent = count((r) => r.event_type === "message_sent");
  const received = count((r) => r.event_type === "message_received");
  const failed = count((r) => r.event_type === "message_failed");
  return {
    sent,
    received,
    failed,
    unsettled: sent - received - failed,
    control_assigned: count((r) => r.event_type === "control_assigned"),
    opens: count((r) => isOpen(r.event_type as string)),
    open_users: users((r) => isOpen(r.event_type as string)),
    clicks: count((r) => r.event_type === "landing_clicked"),
    click_users: users((r) => r.event_type === "landing_clicked"),
    conversions: count((r) => isConversion(r.event_type as string)),
    conversion_users: users((r) => isConversion(r.event_type as string)),
  };
}

describe("summarizeFile on a campaign CSV", () => {
  let result: CampaignSummary;
  beforeAll(async () => {
    const r = await summarizeFile(file);
    if (r.kind !== "campaign_event_data") throw new Error("wrong kind");
    result = r;
  });

  it("matches the output schema", () => {
    expect(campaignSummaryOutputSchema.safeParse(result).success).toBe(true);
  });

  it("counts rows, rounds and totals exactly like an independent count", () => {
    expect(result.rows).toBe(rows.length);
    const keys = [
      ...new Set(rows.map((r) => `${r.task_id}\u0000${r.scheduled_at}\u0000${r.group}`)),
    ];
    expect(result.rounds).toHaveLength(keys.length);
    for (const key of keys) {
      const [task, scheduled, group] = key.split("\u0000");
      const round = result.rounds.find(
        (x) => x.task_id === task && x.scheduled_at === scheduled && x.group === group,
      );
      expect(round, key).toBeDefined();
      const subset = rows.filter(
        (r) => r.task_id === task && r.scheduled_at === scheduled && r.group === group,
      );
      expect(round).toMatchObject(expectedCounts(subset));
    }
    expect(result.totals).toMatchObject(expectedCounts(rows));
    // The fixture has an empty group and a round with empty user ids.
    expect(result.rounds.some((x) => x.group === "")).toBe(true);
    expect(result.unidentified_rows).toBe(rows.filter((r) => userOf(r) === null).length);
    expect(result.unidentified_rows).toBeGreaterThan(0);
  });

  it("lists error codes most frequent first with cleaned samples", () => {
    const counts = new Map<string, number>();
    for (const r of rows) {
      if (r.event_type !== "message_failed") continue;
      const code = r.error_code || "(none)";
      counts.set(code, (counts.get(code) ?? 0) + 1);
    }
    const expected = [...counts.entries()]
      .map(([error_code, count]) => ({ error_code, count }))
      .sort((a, b) => b.count - a.count || a.error_code.localeCompare(b.error_code));
    expect(result.error_codes).toEqual(expected);
    for (const f of result.failures) {
      expect(f.sample_message).not.toMatch(/\p{Cc}|[\u202e\u200b]/u);
      expect([...f.sample_message].length).toBeLessThanOrEqual(160);
    }
  });

  it("infers the conversion type, counts the unlisted open type and sums revenue per currency", () => {
    expect(result.conversion_event_type).toMatchObject({ types: ["purchase"], source: "inferred" });
    expect(result.event_types.find((t) => t.event_type === "kakao_story_clicked")?.role).toBe(
      "open",
    );
    const sums = new Map<string, number>();
    for (const r of rows) {
      if (r.event_type !== "purchase" || r.event_properties === "{}") continue;
      const p = JSON.parse(r.event_properties as string) as { revenue: number; currency: string };
      sums.set(p.currency, (sums.get(p.currency) ?? 0) + p.revenue);
    }
    expect(sums.size).toBe(2);
    for (const [currency, amount] of sums) {
      expect(result.revenue.by_currency.find((c) => c.currency === currency)?.amount).toBeCloseTo(
        amount,
        6,
      );
    }
    expect(result.revenue.amount_key).toBe("revenue");
    expect(result.revenue.currency_key).toBe("currency");
  });

  it("reports delivery per channel, opens by hour and time to first open", () => {
    for (const c of result.delivery.by_channel) {
      const of = (t: string) =>
        rows.filter((r) => r.channel === c.channel && r.event_type === t).length;
      expect(c.sent).toBe(of("message_sent"));
      expect(c.success_rate).toBeCloseTo(
        of("message_received") / (of("message_received") + of("message_failed") || 1),
        5,
      );
    }
    const hours = new Array<number>(24).fill(0);
    for (const r of rows)
      if (isOpen(r.event_type as string)) {
        const h = Number(r.captured_at?.slice(11, 13));
        hours[h] = (hours[h] ?? 0) + 1;
      }
    expect(result.timing.opens_by_hour).toEqual(hours);

    const secs = (t: string) => Date.parse(`${t.replace(" ", "T")}Z`) / 1000;
    const deltas: number[] = [];
    const roundKey = (r: Row) => `${r.task_id}|${r.scheduled_at}|${r.group}`;
    const receipts = new Map<string, number>();
    const firstOpen = new Map<string, number>();
    for (const r of rows) {
      const u = userOf(r);
      if (u === null) continue;
      const k = `${roundKey(r)}|${u}`;
      const t = secs(r.captured_at as string);
      if (r.event_type === "message_received") receipts.set(k, Math.min(receipts.get(k) ?? t, t));
      if (isOpen(r.event_type as string)) firstOpen.set(k, Math.min(firstOpen.get(k) ?? t, t));
    }
    for (const [k, t] of firstOpen) {
      const rt = receipts.get(k);
      if (rt !== undefined && t >= rt) deltas.push(t - rt);
    }
    deltas.sort((a, b) => a - b);
    const q = (p: number) => deltas[Math.ceil(p * deltas.length) - 1];
    expect(result.timing.receipt_to_first_open.pairs).toBe(deltas.length);
    expect(result.timing.receipt_to_first_open.median_seconds).toBe(q(0.5));
    expect(result.timing.receipt_to_first_open.p90_seconds).toBe(q(0.9));
  });

  it("compares the A/B groups and the control group with a z-test", () => {
    expect(result.ab_test.groups.map((g) => g.group)).toEqual(["그룹A", "그룹B"]);
    const cmp = result.ab_test.comparisons.find((c) => c.metric === "open_rate");
    expect(cmp?.group).toBe("그룹A");
    expect(cmp?.versus).toBe("그룹B");
    // Independent z-test on received users who opened.
    const stats = (group: string) => {
      const sub = rows.filter((r) => r.group === group);
      const rec = new Set(
        sub
          .filter((r) => r.event_type === "message_received")
          .map(userOf)
          .filter(Boolean),
      );
      const opened = new Set(
        sub
          .filter((r) => isOpen(r.event_type as string))
          .map(userOf)
          .filter((u) => rec.has(u)),
      );
      return { x: opened.size, n: rec.size };
    };
    const a = stats("그룹A");
    const b = stats("그룹B");
    const p = (a.x + b.x) / (a.n + b.n);
    const z = (a.x / a.n - b.x / b.n) / Math.sqrt(p * (1 - p) * (1 / a.n + 1 / b.n));
    expect(cmp?.z).toBeCloseTo(z, 4);
    expect(cmp?.rate).toBeCloseTo(a.x / a.n, 5);
    // p-value from an independent normal CDF (Abramowitz-Stegun 7.1.26 erf), and the verdict
    // must agree with it either way ("not significant" also contains "significant at 95%").
    const erf = (x: number) => {
      const t = 1 / (1 + 0.3275911 * Math.abs(x));
      const y =
        1 -
        ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t +
          0.254829592) *
          t *
          Math.exp(-x * x);
      return x >= 0 ? y : -y;
    };
    const pValue = 2 * (1 - 0.5 * (1 + erf(Math.abs(z) / Math.SQRT2)));
    // Shown to 4 significant digits.
    expect(cmp?.p_value).toBeCloseTo(pValue, 3);
    expect(cmp?.significant).toBe(pValue < 0.05);
    expect(cmp?.verdict).toMatch(
      pValue < 0.05
        ? /; the difference is significant at 95%/
        : /but the difference is not significant at 95%/,
    );
    const control = result.ab_test.control;
    // Control users who converted in the control round, counted here.
    const controlUsers = new Set(
      rows
        .filter((r) => r.event_type === "control_assigned")
        .map(userOf)
        .filter(Boolean),
    );
    const controlConverted = new Set(
      rows
        .filter(
          (r) =>
            r.group === "대조군" &&
            result.conversion_event_type.types.includes(r.event_type as string),
        )
        .map(userOf)
        .filter((u) => controlUsers.has(u)),
    );
    expect(control?.converted_users).toBe(controlConverted.size);
    expect(control?.assigned_users).toBe(
      new Set(
        rows
          .filter((r) => r.event_type === "control_assigned")
          .map(userOf)
          .filter(Boolean),
      ).size,
    );
  });

  it("renders short markdown that says what was left out", () => {
    const text = renderSummaryMarkdown(result);
    expect(text.length).toBeLessThan(4000);
    expect(text).toMatch(/Nothing left out|Not shown/);
    expect(text).not.toContain("\u202e");
  });

  it("uses the requested conversion event type", async () => {
    const r = await summarizeFile(file, { conversionEventType: "landing_clicked_nope" });
    if (r.kind !== "campaign_event_data") throw new Error("wrong kind");
    expect(r.totals.conversions).toBe(0);
    expect(r.conversion_event_type.source).toBe("input");
    expect(r.conversion_event_type.note).toMatch(/No row has the requested/);
  });
});

describe("error codes past the cap", () => {
  it("counts each kept code on every row and the rest under (other codes), whatever the cache holds", async () => {
    const row = (code: string) =>
      eventRow({
        task: "tsk_1",
        scheduled: "2024-05-21 12:00:00",
        group: "그룹A",
        event: "message_failed",
        platformUserId: "u1",
        at: "2024-05-21 12:01:00",
        errorCode: code,
        errorMessage: "failed",
      });
    // 1,000 codes fill the cap; E1000 and E1001 come after it, E0 and a quoted E5 again later.
    const rows = Array.from({ length: 1000 }, (_, k) => row(`E${k}`));
    rows.push(row("E1000"), row("E1001"), row("E0"), row("E1001"), row("E0"), row("E1001"));
    const lines = toCsv([HEADER, ...rows]).split("\r\n");
    const quotedE5 = must(lines[6], "seventh line").replace(",E5,", ',"E5",');
    expect(quotedE5).toContain(',"E5",');
    lines.splice(lines.length - 1, 0, quotedE5);
    const capped = join(dir, "capped-codes.csv");
    await writeFile(capped, lines.join("\r\n"));
    const result = await summarizeFile(capped);
    if (result.kind !== "campaign_event_data") throw new Error("not a campaign summary");
    const count = (code: string) => result.error_codes.find((c) => c.error_code === code)?.count;
    expect(count("E0")).toBe(3);
    expect(count("E5")).toBe(2);
    expect(count("E999")).toBe(1);
    expect(count("E1000")).toBeUndefined();
    expect(count("(other codes)")).toBe(4);
  });
});
