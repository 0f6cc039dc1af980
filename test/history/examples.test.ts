import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { roleOf } from "../../src/analysis/event-roles.js";
import { describeHistory, type HistoryDescription } from "../../src/history/describe.js";
import { HISTORY_EXAMPLES } from "../../src/history/examples.js";
import { queryHistory } from "../../src/history/query.js";
import { type SelectedRound, writeCampaignCsv } from "../../src/sandbox/csv-writer.js";
import { createWorld } from "../../src/sandbox/world/index.js";
import type { SandboxCampaign } from "../../src/sandbox/world/types.js";
import {
  type HistoryFixture,
  historyFixture,
  NOW,
  userRows,
  writeCampaignCsv as writeRows,
} from "./fixtures.js";

/**
 * The history's description and each of its example queries on the sandbox's exports of every
 * channel (the rounds of the last 30 days of each campaign that has them, the one round of the
 * others), plus one export written here in which some users get a message a day, so that the
 * fatigue example has users on both sides. Every figure is counted again here from the CSV files
 * (csv-parse, the summary's roles) and must be equal.
 */

const LIMITS = { memoryMb: 512, threads: 1, timeoutSeconds: 120 };
const world = createWorld({ seed: 7, now: NOW });
const SINCE = NOW - 30 * 86_400_000;

let f: HistoryFixture;
const files: { path: string; campaign: string }[] = [];
let description: HistoryDescription;

function roundsOf(campaign: SandboxCampaign): SelectedRound[] {
  const done = campaign.tasks.filter((t) => t.aggregated);
  const recent = done.filter((t) => t.scheduled_at >= SINCE);
  return (recent.length > 0 ? recent : done.slice(-1)).flatMap((task) =>
    task.rounds.map((round) => ({ task, round })),
  );
}

beforeAll(async () => {
  f = await historyFixture();
  const campaigns = world.campaigns.filter(
    (c) => (c.role === "normal" || c.role === "many_rounds") && roundsOf(c).length > 0,
  );
  let n = 0;
  for (const campaign of campaigns) {
    const path = join(f.dir, `${campaign._id}.csv`);
    await writeCampaignCsv(world, roundsOf(campaign), path, 540);
    files.push({ path, campaign: campaign._id });
    await f.history.ingestCampaignExport({
      path,
      jobId: `job-${n++}`,
      campaignId: campaign._id,
      campaignName: campaign.name,
      window: {},
      jobCreatedAt: new Date(NOW).toISOString(),
    });
  }
  // Daily messages to ten users for eight days, opened on even days.
  const daily = Array.from({ length: 8 }, (_, d) => d).flatMap((d) => {
    const round = { task: `daily-${d}`, at: `2026-11-${String(10 + d).padStart(2, "0")} 09:00:00` };
    return Array.from({ length: 10 }, (_, u) =>
      userRows(round, String(900_000 + u), [
        "message_sent",
        "message_received",
        ...(d % 2 === 0 ? ["push_opened"] : []),
      ]),
    ).flat();
  });
  const dailyPath = await writeRows(join(f.dir, "daily.csv"), daily);
  files.push({ path: dailyPath, campaign: "cmp_daily" });
  await f.history.ingestCampaignExport({
    path: dailyPath,
    jobId: "job-daily",
    campaignId: "cmp_daily",
    window: {},
    jobCreatedAt: new Date(NOW).toISOString(),
  });
  description = await describeHistory(f.history, { limits: LIMITS, spillParent: f.dir });
}, 300_000);

afterAll(async () => {
  await f?.close();
});

interface Message {
  user: string;
  campaign: string;
  round: string;
  scheduledAt: string;
  receivedAt: string;
  channel: string | null;
}

/** The files' rows counted again: messages (a user's first receipt of a round) and opens. */
async function counted() {
  const messages = new Map<string, Message>();
  const opened = new Set<string>();
  const channels = new Map<string, string>();
  const roundOpenUsers = new Map<string, Set<string>>();
  const roundReceivedUsers = new Map<string, Set<string>>();
  for (const file of files) {
    const records = parse(await readFile(file.path), { from_line: 2 }) as string[][];
    for (const r of records) {
      const [task, scheduled, group, type, userId, platformUserId, captured, channel] =
        r as string[];
      const role = roleOf(type as string, undefined);
      const user = (platformUserId || userId) as string;
      const round = `${file.campaign}|${task}|${scheduled}|${group}`;
      if (["sent", "received", "failed"].includes(role) && channel) channels.set(round, channel);
      if (user === "") continue;
      const key = `${user}|${round}`;
      if (role === "received") {
        const seen = messages.get(key);
        if (seen === undefined || (captured as string) < seen.receivedAt) {
          messages.set(key, {
            user,
            campaign: file.campaign,
            round,
            scheduledAt: scheduled as string,
            receivedAt: captured as string,
            channel: null,
          });
        }
        roundReceivedUsers.set(round, (roundReceivedUsers.get(round) ?? new Set()).add(user));
      }
      if (role === "open") {
        opened.add(key);
        roundOpenUsers.set(round, (roundOpenUsers.get(round) ?? new Set()).add(user));
      }
    }
  }
  return { messages: [...messages.values()], opened, channels, roundOpenUsers, roundReceivedUsers };
}

let once: ReturnType<typeof counted> | undefined;
/** Counted once for every test below. */
function facts(): ReturnType<typeof counted> {
  once ??= counted();
  return once;
}

function day(text: string): number {
  return Date.UTC(
    Number(text.slice(0, 4)),
    Number(text.slice(5, 7)) - 1,
    Number(text.slice(8, 10)),
  );
}

function ask(sql: string) {
  return queryHistory(f.history, { sql, maxRows: 10_000, limits: LIMITS, spillParent: f.dir });
}

function example(name: string): string {
  const found = HISTORY_EXAMPLES.find((e) => e.name === name);
  if (found === undefined) throw new Error(`no example ${name}`);
  expect(description.examples.map((e) => e.sql)).toContain(found.sql);
  return found.sql;
}

describe("the history's description", () => {
  it("names the tables, campaigns of every channel, the span of rounds and the rows", async () => {
    expect(description.tables.map((t) => t.name)).toEqual([
      "history",
      "history_campaigns",
      "history_messages",
      "history_scenario_days",
    ]);
    const rows = files.length;
    expect(description.campaigns_total).toBe(rows);
    expect(description.exports).toBe(rows);
    const channels = new Set(description.campaigns.flatMap((c) => c.channels));
    expect([...channels].sort()).toEqual(
      ["alimtalk", "app_push", "brand_message", "email", "friendtalk", "rcs", "sms"].sort(),
    );
    const total = (await ask("SELECT count(*) FROM history")).rows[0]?.[0];
    expect(description.rows).toBe(total);
    expect(description.tables[0]?.rows).toBe(total);
    expect(description.rounds_from).toBe(
      (await ask("SELECT strftime(min(scheduled_at), '%Y-%m-%d %H:%M:%S') FROM history"))
        .rows[0]?.[0],
    );
    expect(description.examples.map((e) => e.title)).toHaveLength(4);
  });
});

describe("the example queries, on the sandbox's history", () => {
  it("fatigue: users with 5 or more messages within 7 calendar days, and open rates", async () => {
    const { messages, opened } = await facts();
    const byUser = new Map<string, number[]>();
    for (const m of messages)
      byUser.set(m.user, [...(byUser.get(m.user) ?? []), day(m.receivedAt)]);
    const fatigued = new Set<string>();
    for (const [user, days] of byUser) {
      days.sort((a, b) => a - b);
      for (let i = 0; i < days.length; i++) {
        if (
          days.filter((d) => d <= (days[i] as number) && d > (days[i] as number) - 7 * 86_400_000)
            .length >= 5
        ) {
          fatigued.add(user);
        }
      }
    }
    const group = (tired: boolean) => {
      const mine = messages.filter((m) => fatigued.has(m.user) === tired);
      const opens = mine.filter((m) => opened.has(`${m.user}|${m.round}`)).length;
      return [
        tired ? "5 or more within 7 days" : "under 5 in every 7 days",
        new Set(mine.map((m) => m.user)).size,
        mine.length,
        opens,
        Math.round((opens / mine.length) * 10_000) / 10_000,
      ];
    };
    expect(fatigued.size).toBeGreaterThanOrEqual(10);
    expect((await ask(example("fatigue"))).rows).toEqual([group(true), group(false)]);
  });

  it("overlap: users reached by both campaigns of each pair", async () => {
    const { messages } = await facts();
    const reached = new Map<string, Set<string>>();
    for (const m of messages)
      reached.set(m.campaign, (reached.get(m.campaign) ?? new Set()).add(m.user));
    const pairs: [string, string, number][] = [];
    const ids = [...reached.keys()].sort();
    for (const [i, a] of ids.entries()) {
      for (const b of ids.slice(i + 1)) {
        const both = [...(reached.get(a) as Set<string>)].filter((u) =>
          reached.get(b)?.has(u),
        ).length;
        if (both > 0) pairs.push([a, b, both]);
      }
    }
    pairs.sort(
      (x, y) => y[2] - x[2] || (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] < y[1] ? -1 : 1),
    );
    expect(pairs.length).toBeGreaterThan(0);
    expect((await ask(example("overlap"))).rows).toEqual(pairs.slice(0, 50));
  });

  it("weekly open rate per channel", async () => {
    const { channels, roundOpenUsers, roundReceivedUsers } = await facts();
    const weeks = new Map<string, { received: number; opened: number }>();
    for (const [round, channel] of channels) {
      const scheduled = round.split("|")[2] as string;
      const d = day(scheduled);
      const monday = new Date(d - ((new Date(d).getUTCDay() + 6) % 7) * 86_400_000);
      const key = `${monday.toISOString().slice(0, 10)} 00:00:00|${channel}`;
      const w = weeks.get(key) ?? { received: 0, opened: 0 };
      w.received += roundReceivedUsers.get(round)?.size ?? 0;
      w.opened += roundOpenUsers.get(round)?.size ?? 0;
      weeks.set(key, w);
    }
    const expected = [...weeks.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([key, w]) => {
        const [week, channel] = key.split("|");
        return [
          week,
          channel,
          w.received,
          w.opened,
          w.received === 0 ? null : Math.round((w.opened / w.received) * 10_000) / 10_000,
        ];
      });
    expect(expected.length).toBeGreaterThan(7);
    expect((await ask(example("weekly_open_rate"))).rows).toEqual(expected);
  });

  it("time since the previous message against open rate", async () => {
    const { messages, opened } = await facts();
    const byUser = new Map<string, Message[]>();
    for (const m of messages) byUser.set(m.user, [...(byUser.get(m.user) ?? []), m]);
    const buckets = new Map<string, { order: number; messages: number; opened: number }>();
    const seconds = (t: string) => Date.parse(`${t.replace(" ", "T")}Z`) / 1000;
    for (const list of byUser.values()) {
      list.sort((a, b) => (a.receivedAt < b.receivedAt ? -1 : 1));
      list.forEach((m, i) => {
        // date_diff('hour') counts hour boundaries crossed.
        const hours =
          i === 0
            ? null
            : Math.floor(seconds(m.receivedAt) / 3600) -
              Math.floor(seconds((list[i - 1] as Message).receivedAt) / 3600);
        const name =
          hours === null
            ? "first message"
            : hours < 24
              ? "under 1 day"
              : hours < 72
                ? "1 to 3 days"
                : hours < 168
                  ? "3 to 7 days"
                  : "7 days or more";
        const b = buckets.get(name) ?? { order: Number.POSITIVE_INFINITY, messages: 0, opened: 0 };
        b.order = Math.min(b.order, hours ?? -1);
        b.messages += 1;
        if (opened.has(`${m.user}|${m.round}`)) b.opened += 1;
        buckets.set(name, b);
      });
    }
    const expected = [...buckets.entries()]
      .sort(([, a], [, b]) => a.order - b.order)
      .map(([name, b]) => [
        name,
        b.messages,
        b.opened,
        Math.round((b.opened / b.messages) * 10_000) / 10_000,
      ]);
    expect(expected.length).toBeGreaterThanOrEqual(3);
    expect((await ask(example("time_since_previous"))).rows).toEqual(expected);
  });
});
