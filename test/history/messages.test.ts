import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogueSchema } from "../../src/history/catalogue.js";
import { HISTORY_EXAMPLES } from "../../src/history/examples.js";
import type { History } from "../../src/history/history.js";
import { catalogueFilePath } from "../../src/history/layout.js";
import { queryHistory } from "../../src/history/query.js";
import {
  type CsvRow,
  type HistoryFixture,
  historyFixture,
  userRows,
  writeCampaignCsv,
} from "./fixtures.js";

/**
 * The example questions read `history_messages`, the messages kept at ingestion; here each is
 * asked again of `history` itself, grouping the events in the query as a reader without that
 * table would, and the answers must be equal: with no conversion event type (the kept files),
 * with one (history_messages grouped from history), and with a partition whose messages file is
 * not named (a history written before messages were kept). The history has rounds in two
 * months, two campaigns, a round held by two exports (the newest kept), users with a message a
 * day and users with a few, a send that failed and a user known by user_id alone.
 */

const USER = "coalesce(platform_user_id, user_id)";
const MESSAGES = `messages AS (SELECT ${USER} AS user_key, min(captured_at) FILTER (WHERE event_role = 'received') AS received_at, bool_or(event_role = 'open') AS opened FROM history WHERE event_role IN ('received', 'open') AND ${USER} IS NOT NULL GROUP BY ${USER}, campaign_id, task_id, scheduled_at, "group" HAVING received_at IS NOT NULL)`;

const OVER_HISTORY: Record<string, string> = {
  fatigue: `WITH ${MESSAGES}, users AS (SELECT user_key, count(*) AS messages, count(*) FILTER (WHERE opened) AS opened, coalesce(bool_or(CAST(received_at AS DATE) - fifth_back <= 6), false) AS fatigued FROM (SELECT *, lag(CAST(received_at AS DATE), 4) OVER (PARTITION BY user_key ORDER BY received_at) AS fifth_back FROM messages) GROUP BY 1) SELECT CASE WHEN fatigued THEN '5 or more within 7 days' ELSE 'under 5 in every 7 days' END AS exposure, count(*) AS users, sum(messages) AS messages, sum(opened) AS opened, round(sum(opened) / sum(messages), 4) AS open_rate FROM users GROUP BY 1 ORDER BY 1`,
  overlap: `WITH reached AS (SELECT DISTINCT campaign_id, ${USER} AS user_key FROM history WHERE event_role = 'received' AND ${USER} IS NOT NULL) SELECT a.campaign_id AS campaign_a, b.campaign_id AS campaign_b, count(*) AS users_reached_by_both FROM reached a JOIN reached b ON a.user_key = b.user_key AND a.campaign_id < b.campaign_id GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2 LIMIT 50`,
  weekly_open_rate: `WITH rounds AS (SELECT campaign_id, task_id, scheduled_at, coalesce("group", '') AS grp, any_value(channel) FILTER (WHERE event_role IN ('sent', 'received', 'failed')) AS channel, count(DISTINCT ${USER}) FILTER (WHERE event_role = 'received') AS received_users, count(DISTINCT ${USER}) FILTER (WHERE event_role = 'open') AS open_users FROM history GROUP BY 1, 2, 3, 4) SELECT date_trunc('week', scheduled_at) AS week, channel, sum(received_users) AS received_users, sum(open_users) AS open_users, round(sum(open_users) / nullif(sum(received_users), 0), 4) AS open_rate FROM rounds WHERE channel IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2`,
  time_since_previous: `WITH ${MESSAGES}, gaps AS (SELECT opened, date_diff('hour', lag(received_at) OVER (PARTITION BY user_key ORDER BY received_at), received_at) AS hours_since_previous FROM messages) SELECT CASE WHEN hours_since_previous IS NULL THEN 'first message' WHEN hours_since_previous < 24 THEN 'under 1 day' WHEN hours_since_previous < 72 THEN '1 to 3 days' WHEN hours_since_previous < 168 THEN '3 to 7 days' ELSE '7 days or more' END AS since_previous, count(*) AS messages, count(*) FILTER (WHERE opened) AS opened, round(count(*) FILTER (WHERE opened) / count(*), 4) AS open_rate FROM gaps GROUP BY 1 ORDER BY min(coalesce(hours_since_previous, -1))`,
};

const LIMITS = { memoryMb: 256, threads: 1, timeoutSeconds: 60 };

let f: HistoryFixture;

const day = (d: number, hour = "09") => {
  const date = new Date(Date.UTC(2026, 9, 29 + d));
  return `${date.toISOString().slice(0, 10)} ${hour}:00:00`;
};

function campaignA(): CsvRow[] {
  const rows: CsvRow[] = [];
  for (let d = 0; d < 7; d++) {
    const round = { task: "a-daily", at: day(d) };
    for (let u = 1; u <= 6; u++) {
      const opened = u <= 3 && d % 2 === 0;
      rows.push(
        ...userRows(round, String(u), [
          "message_sent",
          "message_received",
          ...(opened ? ["push_opened"] : []),
          ...(u === 2 && d === 1 ? ["purchase"] : []),
        ]),
      );
    }
    if (d < 3) {
      for (const u of ["7", "8"])
        rows.push(...userRows(round, u, ["message_sent", "message_received"]));
      rows.push(...userRows(round, "9", ["message_sent", "message_failed"]));
      rows.push(
        ...userRows(round, "10", ["message_sent", "message_received", "push_opened"]).map((r) => ({
          ...r,
          platform_user_id: "",
        })),
      );
    }
  }
  return rows;
}

async function add(
  history: History,
  jobId: string,
  campaignId: string,
  created: string,
  rows: CsvRow[],
) {
  const path = await writeCampaignCsv(join(f.dir, `${jobId}.csv`), rows);
  await history.ingestCampaignExport({
    path,
    jobId,
    campaignId,
    window: {},
    jobCreatedAt: created,
  });
}

beforeAll(async () => {
  f = await historyFixture();
  await add(f.history, "job-a", "cmp_a", "2026-11-05T00:00:00Z", campaignA());
  const b0 = { task: "b", at: day(3, "12") };
  const b1 = { task: "b", at: day(5, "12") };
  await add(f.history, "job-b1", "cmp_b", "2026-11-06T00:00:00Z", [
    ...["1", "2", "3", "4"].flatMap((u) => userRows(b0, u, ["message_sent", "message_received"])),
    ...["1", "2", "3", "4"].flatMap((u) =>
      userRows(b1, u, ["message_sent", "message_received", "push_opened"], "sms"),
    ),
  ]);
  // A later export of cmp_b holds b1 again, to other users: its rows are the ones kept.
  await add(f.history, "job-b2", "cmp_b", "2026-11-07T00:00:00Z", [
    ...["5", "6", "7", "8"].flatMap((u) => userRows(b1, u, ["message_sent", "message_received"])),
    ...["1", "7"].flatMap((u) =>
      userRows({ task: "b", at: day(12, "12") }, u, [
        "message_sent",
        "message_received",
        "push_opened",
      ]),
    ),
  ]);
}, 120_000);

afterAll(async () => {
  await f?.close();
});

function ask(history: History, sql: string, conversionEventType?: string) {
  return queryHistory(history, {
    sql,
    maxRows: 1000,
    limits: LIMITS,
    spillParent: f.dir,
    ...(conversionEventType === undefined ? {} : { conversionEventType }),
  });
}

async function bothWays(history: History, conversionEventType?: string) {
  for (const example of HISTORY_EXAMPLES) {
    const kept = await ask(history, example.sql, conversionEventType);
    const grouped = await ask(history, OVER_HISTORY[example.name] as string, conversionEventType);
    expect(kept.rows.length, example.name).toBeGreaterThan(0);
    expect(kept.rows, example.name).toEqual(grouped.rows);
  }
}

describe("history_messages against history", () => {
  it("the fatigue example has users on both sides, and each example agrees with history", async () => {
    const fatigue = HISTORY_EXAMPLES.find((e) => e.name === "fatigue")?.sql as string;
    expect((await ask(f.history, fatigue)).rows).toEqual([
      ["5 or more within 7 days", 6, 49, 13, 0.2653],
      ["under 5 in every 7 days", 3, 12, 4, 0.3333],
    ]);
    expect(
      (await f.history.catalogue()).partitions.every((p) => p.dataset !== "events" || p.messages),
    ).toBe(true);
    await bothWays(f.history);
  });

  it("with a conversion event type, whose rows are no longer opens", async () => {
    const kept = await ask(
      f.history,
      "SELECT count(*) FILTER (WHERE opened), count(*) FILTER (WHERE converted) FROM history_messages",
      "push_opened",
    );
    expect(kept.rows).toEqual([[0, 17]]);
    await bothWays(f.history, "push_opened");
  });

  it("over partitions whose messages file is not named, or has another DuckDB's user keys", async () => {
    const path = catalogueFilePath(f.history.folder);
    const text = JSON.parse(await readFile(path, "utf8")) as { format: number };
    const catalogue = catalogueSchema.parse(text);
    const events = catalogue.partitions.flatMap((p) => (p.dataset === "events" ? [p] : []));
    const october = events.find((p) => p.campaign_id === "cmp_a" && p.round_month === "2026-10");
    const november = events.find((p) => p.campaign_id === "cmp_b" && p.round_month === "2026-11");
    expect(october?.messages).toBeDefined();
    expect(november?.messages).toBeDefined();
    delete october?.messages;
    if (november?.messages) november.messages.key_probe = "1";
    await writeFile(path, JSON.stringify({ format: text.format, ...catalogue }));
    const reopened = f.reopen();
    const partitions = (await reopened.catalogue()).partitions;
    expect(partitions.filter((p) => p.dataset === "events" && !p.messages)).toHaveLength(1);
    await bothWays(reopened);
  });
});
