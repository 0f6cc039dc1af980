/**
 * Example questions across campaigns and time, as the description offers them. They read
 * `history_messages` (one row per user and round, kept at ingestion: messages.ts), not
 * `history`: grouping the events into messages is the costly step over a large history, done
 * once per file when it is written. A message is a round a user received (`received`, at
 * `received_at`: their first `received` row of it); it was opened when the user has an `open` row
 * in the same round. A user is who summarize_export counts as one, keyed by `user_key`. Each runs
 * on the sandbox's history in test/history/examples.test.ts, against counts made there from the
 * CSV files themselves, and test/history/messages.test.ts asks the same questions of `history`.
 */

export const HISTORY_EXAMPLES = [
  {
    name: "fatigue",
    title:
      "Fatigue: users who received 5 or more messages within 7 calendar days (across campaigns), and their open rate against everyone else's",
    // Five messages within 7 calendar days: some message's day is at most 6 after the day of the
    // fourth message before it. Ordered by the day alone: the days come in the same order as by
    // time (ties among one day's messages do not change which day is four back), and the window
    // sorts a 4-byte date instead of an 8-byte timestamp, its costliest step (bench/RESULTS.md).
    sql: `WITH days AS (SELECT user_key, opened, CAST(received_at AS DATE) AS day FROM history_messages WHERE received), users AS (SELECT user_key, count(*) AS messages, count(*) FILTER (WHERE opened) AS opened, coalesce(bool_or(day - fifth_back <= 6), false) AS fatigued FROM (SELECT user_key, opened, day, lag(day, 4) OVER (PARTITION BY user_key ORDER BY day) AS fifth_back FROM days) GROUP BY 1) SELECT CASE WHEN fatigued THEN '5 or more within 7 days' ELSE 'under 5 in every 7 days' END AS exposure, count(*) AS users, sum(messages) AS messages, sum(opened) AS opened, round(sum(opened) / sum(messages), 4) AS open_rate FROM users GROUP BY 1 ORDER BY 1`,
  },
  {
    name: "overlap",
    title: "Overlap: users reached by both campaigns of each pair",
    sql: `WITH reached AS (SELECT DISTINCT campaign_id, user_key FROM history_messages WHERE received) SELECT a.campaign_id AS campaign_a, b.campaign_id AS campaign_b, count(*) AS users_reached_by_both FROM reached a JOIN reached b ON a.user_key = b.user_key AND a.campaign_id < b.campaign_id GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2 LIMIT 50`,
  },
  {
    name: "weekly_open_rate",
    title: "Weekly open rate per channel (users who opened over users who received, per round)",
    sql: `WITH rounds AS (SELECT campaign_id, task_id, scheduled_at, coalesce("group", '') AS grp, any_value(channel) AS channel, count(*) FILTER (WHERE received) AS received_users, count(*) FILTER (WHERE opened) AS open_users FROM history_messages GROUP BY 1, 2, 3, 4) SELECT date_trunc('week', scheduled_at) AS week, channel, sum(received_users) AS received_users, sum(open_users) AS open_users, round(sum(open_users) / nullif(sum(received_users), 0), 4) AS open_rate FROM rounds WHERE channel IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2`,
  },
  {
    name: "time_since_previous",
    title: "Time since the user's previous message (any campaign) against open rate",
    sql: `WITH gaps AS (SELECT opened, date_diff('hour', lag(received_at) OVER (PARTITION BY user_key ORDER BY received_at), received_at) AS hours_since_previous FROM history_messages WHERE received) SELECT CASE WHEN hours_since_previous IS NULL THEN 'first message' WHEN hours_since_previous < 24 THEN 'under 1 day' WHEN hours_since_previous < 72 THEN '1 to 3 days' WHEN hours_since_previous < 168 THEN '3 to 7 days' ELSE '7 days or more' END AS since_previous, count(*) AS messages, count(*) FILTER (WHERE opened) AS opened, round(count(*) FILTER (WHERE opened) / count(*), 4) AS open_rate FROM gaps GROUP BY 1 ORDER BY min(coalesce(hours_since_previous, -1))`,
  },
] as const;
