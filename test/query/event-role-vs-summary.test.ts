import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CampaignSummary, summarizeFile } from "../../src/analysis/index.js";
import { describeExports } from "../../src/query/describe.js";
import { queryFiles } from "../../src/query/index.js";
import type { JsonValue } from "../../src/query/values.js";
import { type SelectedRound, writeCampaignCsv } from "../../src/sandbox/csv-writer.js";
import { createWorld } from "../../src/sandbox/world/index.js";
import type { Channel, SandboxCampaign } from "../../src/sandbox/world/types.js";
import { must } from "../helpers/must.js";

/**
 * query_export's event_role and every example query of its describe mode, on sandbox exports of
 * each channel and of an A/B campaign with a control group, against summarize_export on the same
 * file. Figures the summary does not give are counted here from the file (csv-parse) with the
 * roles the summary reports for each event type.
 */

const CHANNELS: Channel[] = [
  "app_push",
  "alimtalk",
  "friendtalk",
  "brand_message",
  "sms",
  "rcs",
  "email",
];
const LIMITS = { memoryMb: 256, threads: 1, timeoutSeconds: 60 };
/** Tasks written per export: enough rows for every role, few enough to stay quick. */
const TASKS = 2;

const world = createWorld({ seed: 7, now: Date.parse("2026-11-20T03:00:00Z") });

interface Case {
  name: string;
  path: string;
  /** conversion_event_type as given to both tools (undefined: their default rule). */
  conversionType: string | undefined;
}

let dir: string;
const cases: Case[] = [];

function exportOf(campaign: SandboxCampaign): SelectedRound[] {
  return campaign.tasks
    .filter((t) => t.aggregated)
    .slice(0, TASKS)
    .flatMap((task) => task.rounds.map((round) => ({ task, round })));
}

function plainCampaign(channel: Channel): SandboxCampaign {
  const found = world.campaigns.find(
    (c) => c.channel === channel && c.role === "normal" && !c.is_ab_test && exportOf(c).length > 0,
  );
  if (found === undefined) throw new Error(`the sandbox has no plain ${channel} campaign`);
  return found;
}

const controlled = world.campaigns.find(
  (c) =>
    c.role === "normal" &&
    exportOf(c).some(({ round }) => round.isControl) &&
    exportOf(c).filter(({ round }) => !round.isControl).length >= 2,
);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "event-role-vs-summary-"));
  const campaigns: { name: string; campaign: SandboxCampaign }[] = CHANNELS.map((channel) => ({
    name: channel,
    campaign: plainCampaign(channel),
  }));
  if (controlled === undefined) throw new Error("the sandbox has no A/B campaign with a control");
  campaigns.push({ name: `ab-control-${controlled.channel}`, campaign: controlled });
  for (const { name, campaign } of campaigns) {
    const path = join(dir, `${name}.csv`);
    await writeCampaignCsv(world, exportOf(campaign), path, 540);
    cases.push({ name, path, conversionType: undefined });
    // The type given, as the campaign's own setting, padded: both tools trim it.
    cases.push({
      name: `${name}, given`,
      path,
      conversionType: ` ${campaign.conversion.event_type} `,
    });
  }
  // An open type chosen as the conversion: opens move to conversions and purchases to "other".
  const ab = cases.find((c) => c.name.startsWith("ab-control")) as Case;
  const openType = parse(await readFile(ab.path), { from_line: 2 })
    .map((r: string[]) => r[3] as string)
    .find((t: string) => t.endsWith("_clicked") && t !== "landing_clicked");
  cases.push({ ...ab, name: "ab-control, an open type given", conversionType: openType });
}, 60_000);

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

function sql(c: Case, statement: string) {
  return queryFiles({
    sql: statement,
    files: [{ path: c.path, jobId: null }],
    limits: LIMITS,
    maxRows: 100_000,
    spillParent: dir,
    ...(c.conversionType !== undefined ? { conversionEventType: c.conversionType } : {}),
  });
}

function summaryOf(c: Case): Promise<CampaignSummary> {
  return summarizeFile(c.path, {
    ...(c.conversionType !== undefined ? { conversionEventType: c.conversionType } : {}),
  }) as Promise<CampaignSummary>;
}

/** The file's rows, each with the role the summary gave its event type. */
async function rowsOf(c: Case, summary: CampaignSummary) {
  const roles = new Map(summary.event_types.map((t) => [t.event_type, t.role]));
  const records = parse(await readFile(c.path), { from_line: 2 }) as string[][];
  return records.map((r) => ({
    round: `${r[0]}|${r[1]}|${r[2]}`,
    group: r[2] === "" ? "(none)" : (r[2] as string),
    role: roles.get(r[3] as string),
    user: must(r[5] || r[4], "user columns"),
    at: Date.parse(`${(r[6] as string).replace(" ", "T")}Z`) / 1000,
  }));
}

/** The lower median, as the summary's quantile (nearest rank). */
function lowerMedian(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil(0.5 * sorted.length) - 1] ?? null;
}

function byName(columns: { name: string }[], row: JsonValue[]): Record<string, JsonValue> {
  return Object.fromEntries(columns.map((col, k) => [col.name, row[k] ?? null]));
}

describe("event_role equals summarize_export's counting", () => {
  it("SELECT event_role, count(*) gives the summary's totals on every channel and A/B export", async () => {
    expect(cases.length).toBe(2 * (CHANNELS.length + 1) + 1);
    for (const c of cases) {
      const summary = await summaryOf(c);
      const result = await sql(c, "SELECT event_role, count(*) FROM events GROUP BY 1");
      const got = new Map(result.rows.map((r) => [r[0] as string, r[1] as number]));
      const t = summary.totals;
      const other = summary.event_types
        .filter((e) => e.role === "other")
        .reduce((n, e) => n + e.count, 0);
      const expected = {
        sent: t.sent,
        received: t.received,
        failed: t.failed,
        control: t.control_assigned,
        open: t.opens,
        click: t.clicks,
        conversion: t.conversions,
        other,
      };
      const want = new Map(Object.entries(expected).filter(([, n]) => n > 0));
      expect(got, c.name).toEqual(want);
      // Each role the file should have is there: a zero would pass the comparison vacuously.
      const openGiven = c.name.includes("open type");
      for (const role of ["sent", "received", "failed", "click"]) {
        expect(got.get(role), `${c.name}: ${role}`).toBeGreaterThan(0);
      }
      // The channel's one open type, when given as the conversion, leaves no opens.
      expect(got.has("open"), c.name).toBe(!openGiven);
      expect(got.get("conversion"), c.name).toBeGreaterThan(0);
      expect(got.has("other"), c.name).toBe(openGiven);
      // Control rows come only from the export with a control group, and it has them.
      expect(got.has("control"), c.name).toBe(c.name.startsWith("ab-control"));
    }
  });
});

describe("every describe-mode example", () => {
  it("runs on each export and gives the figures summarize_export gives", async () => {
    let singleGroupTimings = 0;
    for (const c of cases) {
      const summary = await summaryOf(c);
      const rows = await rowsOf(c, summary);
      const description = await describeExports({
        events: [{ path: c.path, format: "csv", jobId: null }],
        conversionType: c.conversionType?.trim(),
        scenarios: [],
        limits: LIMITS,
        spillParent: dir,
      });
      expect(description.event_types.map((e) => [e.event_type, e.event_role, e.rows])).toEqual(
        summary.event_types.map((e) => [e.event_type, e.role, e.count]),
      );
      const checked = new Set<string>();
      for (const example of description.examples) {
        const result = await sql(c, example);
        const records = result.rows.map((r) => byName(result.columns, r));
        const where = `${c.name}: ${example}`;
        if (example.startsWith("SELECT event_role, count(*) AS rows")) {
          checked.add("roles");
          const got = new Map(records.map((r) => [r.event_role, r]));
          const t = summary.totals;
          expect(got.get("open")?.rows ?? 0, where).toBe(t.opens);
          expect(got.get("open")?.users ?? 0, where).toBe(t.open_users);
          expect(got.get("click")?.users, where).toBe(t.click_users);
          expect(got.get("conversion")?.rows ?? 0, where).toBe(t.conversions);
          expect(got.get("conversion")?.users ?? 0, where).toBe(t.conversion_users);
          expect(got.get("received")?.users, where).toBe(t.received_users);
          expect(got.get("control")?.users ?? 0, where).toBe(
            summary.ab_test.control?.assigned_users ?? 0,
          );
        } else if (example.startsWith('SELECT task_id, scheduled_at, "group"')) {
          checked.add("rounds");
          const shaped = records.map((r) => ({
            task_id: r.task_id,
            scheduled_at: r.scheduled_at,
            // SQL NULL is the CSV's empty group.
            group: r.group === null ? "" : r.group,
            sent: r.sent,
            received: r.received,
            failed: r.failed,
            opens: r.opens,
            open_users: r.open_users,
            conversions: r.conversions,
          }));
          const fromSummary = summary.rounds.map((r) => ({
            task_id: r.task_id,
            scheduled_at: r.scheduled_at,
            group: r.group,
            sent: r.sent,
            received: r.received,
            failed: r.failed,
            opens: r.opens,
            open_users: r.open_users,
            conversions: r.conversions,
          }));
          expect(shaped, where).toEqual(fromSummary);
        } else if (example.includes("AS failures")) {
          checked.add("failures");
          const perCode = new Map<string, number>();
          for (const r of records) {
            const code = (r.error_code as string | null) ?? "(none)";
            perCode.set(code, (perCode.get(code) ?? 0) + (r.failures as number));
          }
          expect(perCode, where).toEqual(
            new Map(summary.error_codes.map((e) => [e.error_code, e.count])),
          );
        } else if (example.includes("opens >= 2 AND conversions = 0")) {
          checked.add("opened twice");
          const users = new Map<string, { opens: number; conversions: number }>();
          for (const r of rows) {
            if (r.user === "") continue;
            const u = users.get(r.user) ?? { opens: 0, conversions: 0 };
            if (r.role === "open") u.opens++;
            if (r.role === "conversion") u.conversions++;
            users.set(r.user, u);
          }
          const expected = [...users.values()].filter((u) => u.opens >= 2 && u.conversions === 0);
          expect(records, where).toEqual([{ users: expected.length }]);
          expect(expected.length, where).toBeGreaterThan(0);
        } else if (example.includes("AS currency")) {
          checked.add("revenue");
          const got = records.map((r) => [r.currency ?? "(none)", r.conversions]);
          const want = summary.revenue.by_currency.map((s) => [s.currency, s.conversions]);
          // Only purchases carry an amount: none when an open type is the conversion.
          expect(want.length > 0, where).toBe(!c.name.includes("open type"));
          expect(new Set(got.map((x) => JSON.stringify(x))), where).toEqual(
            new Set(want.map((x) => JSON.stringify(x))),
          );
          for (const s of summary.revenue.by_currency) {
            const r = records.find((x) => (x.currency ?? "(none)") === s.currency);
            expect(r?.amount as number, where).toBeCloseTo(s.amount, 2);
          }
        } else if (example.startsWith("WITH firsts AS")) {
          checked.add("timing");
          const openers = records.reduce((n, r) => n + (r.openers as number), 0);
          expect(openers, where).toBe(summary.timing.receipt_to_first_open.pairs);
          // Per group, from the file: each user's first receipt, open and conversion per round.
          const firsts = new Map<
            string,
            { group: string; got?: number; open?: number; conv?: number }
          >();
          for (const r of rows) {
            if (r.user === "") continue;
            const key = `${r.round}|${r.user}`;
            const f = firsts.get(key) ?? { group: r.group };
            const first = (t: number | undefined) => (t === undefined ? r.at : Math.min(t, r.at));
            if (r.role === "received") f.got = first(f.got);
            if (r.role === "open") f.open = first(f.open);
            if (r.role === "conversion") f.conv = first(f.conv);
            firsts.set(key, f);
          }
          const groups = [...new Set([...firsts.values()].map((f) => f.group))].sort();
          const expected = groups
            .map((group) => {
              const of = [...firsts.values()].filter((f) => f.group === group);
              const toOpen = of.flatMap((f) =>
                f.got !== undefined && f.open !== undefined && f.open >= f.got
                  ? [f.open - f.got]
                  : [],
              );
              const toConv = of.flatMap((f) =>
                f.got !== undefined && f.conv !== undefined && f.conv >= f.got
                  ? [f.conv - f.got]
                  : [],
              );
              const minutes = (s: number | null) => (s === null ? null : s / 60);
              return {
                group,
                openers: toOpen.length,
                median_minutes_to_open: minutes(lowerMedian(toOpen)),
                median_minutes_to_conversion: minutes(lowerMedian(toConv)),
              };
            })
            .sort((a, b) => (a.group < b.group ? -1 : a.group > b.group ? 1 : 0));
          expect(records, where).toEqual(expected);
          if (groups.length === 1) {
            singleGroupTimings++;
            // One group: its median is the summary's, which is over the whole file.
            expect(records[0]?.median_minutes_to_open, where).toBe(
              (summary.timing.receipt_to_first_open.median_seconds as number) / 60,
            );
          }
        } else {
          throw new Error(`an example without a check: ${example}`);
        }
      }
      const expected = ["roles", "rounds", "failures"];
      if (summary.totals.opens > 0) expected.push("opened twice", "timing");
      if (summary.totals.conversions > 0) expected.push("revenue");
      expect([...checked].sort(), c.name).toEqual(expected.sort());
    }
    // Some export has one group only, so the summary's own median is compared.
    expect(singleGroupTimings).toBeGreaterThan(0);
  }, 120_000);
});
