import { USER } from "../query/describe.js";

/**
 * Example questions across campaigns and time, as the description offers them. A message is a
 * round a user received (their first `received` row of it); it was opened when the user has an
 * `open` row in the same round. A user is who summarize_export counts as one (query/describe.ts).
 * Each runs on the sandbox's history in test/history/examples.test.ts, against counts made there
 * from the CSV files themselves.
 */

/** One row per user and round received, with when. */
const RECEIVED = `received AS (SELECT ${USER} AS user_key, campaign_id, task_id, scheduled_at, coalesce("group", '') AS grp, min(captured_at) AS received_at FROM history WHERE event_role = 'received' AND ${USER} IS NOT NULL GROUP BY ALL)`;

/** One row per user and round opened. */
const OPENED = `opened AS (SELECT DISTINCT ${USER} AS user_key, campaign_id, task_id, scheduled_at, coalesce("group", '') AS grp FROM history WHERE event_role = 'open' AND ${USER} IS NOT NULL)`;

const SAME_ROUND = "USING (user_key, campaign_id, task_id, scheduled_at, grp)";

export const HISTORY_EXAMPLES = [
  {
    name: "fatigue",
    title:
      "Fatigue: users who received 5 or more messages within 7 calendar days (across campaigns), and their open rate against everyone else's",
    sql: `WITH ${RECEIVED}, ${OPENED}, counted AS (SELECT user_key, count(*) OVER (PARTITION BY user_key ORDER BY CAST(received_at AS DATE) RANGE BETWEEN INTERVAL 6 DAYS PRECEDING AND CURRENT ROW) AS in_7_days FROM received), fatigued AS (SELECT user_key FROM counted GROUP BY 1 HAVING max(in_7_days) >= 5) SELECT CASE WHEN f.user_key IS NULL THEN 'under 5 in every 7 days' ELSE '5 or more within 7 days' END AS exposure, count(DISTINCT r.user_key) AS users, count(*) AS messages, count(o.user_key) AS opened, round(count(o.user_key) / count(*), 4) AS open_rate FROM received r LEFT JOIN fatigued f USING (user_key) LEFT JOIN opened o ${SAME_ROUND} GROUP BY 1 ORDER BY 1`,
  },
  {
    name: "overlap",
    title: "Overlap: users reached by both campaigns of each pair",
    sql: `WITH reached AS (SELECT DISTINCT campaign_id, ${USER} AS user_key FROM history WHERE event_role = 'received' AND ${USER} IS NOT NULL) SELECT a.campaign_id AS campaign_a, b.campaign_id AS campaign_b, count(*) AS users_reached_by_both FROM reached a JOIN reached b ON a.user_key = b.user_key AND a.campaign_id < b.campaign_id GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2 LIMIT 50`,
  },
  {
    name: "weekly_open_rate",
    title: "Weekly open rate per channel (users who opened over users who received, per round)",
    sql: `WITH rounds AS (SELECT campaign_id, task_id, scheduled_at, coalesce("group", '') AS grp, any_value(channel) FILTER (WHERE event_role IN ('sent', 'received', 'failed')) AS channel, count(DISTINCT ${USER}) FILTER (WHERE event_role = 'received') AS received_users, count(DISTINCT ${USER}) FILTER (WHERE event_role = 'open') AS open_users FROM history GROUP BY 1, 2, 3, 4) SELECT date_trunc('week', scheduled_at) AS week, channel, sum(received_users) AS received_users, sum(open_users) AS open_users, round(sum(open_users) / nullif(sum(received_users), 0), 4) AS open_rate FROM rounds WHERE channel IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2`,
  },
  {
    name: "time_since_previous",
    title: "Time since the user's previous message (any campaign) against open rate",
    sql: `WITH ${RECEIVED}, ${OPENED}, gaps AS (SELECT *, date_diff('hour', lag(received_at) OVER (PARTITION BY user_key ORDER BY received_at), received_at) AS hours_since_previous FROM received) SELECT CASE WHEN hours_since_previous IS NULL THEN 'first message' WHEN hours_since_previous < 24 THEN 'under 1 day' WHEN hours_since_previous < 72 THEN '1 to 3 days' WHEN hours_since_previous < 168 THEN '3 to 7 days' ELSE '7 days or more' END AS since_previous, count(*) AS messages, count(o.user_key) AS opened, round(count(o.user_key) / count(*), 4) AS open_rate FROM gaps g LEFT JOIN opened o ${SAME_ROUND} GROUP BY 1 ORDER BY min(coalesce(hours_since_previous, -1))`,
  },
] as const;
