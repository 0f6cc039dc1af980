import { DateTime } from "luxon";
import { zoneLabel } from "../../api/dates.js";
import { MAX_METRICS_WINDOW_DAYS } from "../../api/limits.js";
import {
  formatCount,
  formatNumber,
  money,
  moreNotShown,
  percent,
  table,
  truncate,
} from "../../format.js";
import { type CampaignOut, type Sums, TASKS_IN_TEXT, type TaskOut } from "./schemas.js";

/** campaign_metrics' text for the model: tables of campaigns and rounds, totals, the next step. */

export interface TextParts {
  summary: string;
  /** With compare_to: the changes, which lead the text right after the summary. */
  comparison: string[];
  nextStep: string;
  /** API requests made (more than one when the window was split). */
  requests: number;
  shown: CampaignOut[];
  /** Campaigns matched, shown or not. */
  total: number;
  totals: Sums;
  tasks: TaskOut[] | undefined;
  tasksNotShown: number | undefined;
  /** Why the next step is several exports, when one would exceed the service's limit. */
  split: string | undefined;
  zone: string;
  /** How an export of the window may differ (metrics-vs-export.ts). */
  vsExport: string[];
}

function plural(n: number, noun: string): string {
  return `${formatCount(n)} ${noun}${n === 1 ? "" : "s"}`;
}

export function renderText(parts: TextParts): string {
  const {
    summary,
    comparison,
    nextStep,
    requests,
    shown,
    total,
    totals,
    tasks,
    tasksNotShown,
    split,
    zone,
    vsExport,
  } = parts;
  const lines = [summary, ...comparison];
  if (requests > 1)
    lines.push(
      `(Window longer than ${MAX_METRICS_WINDOW_DAYS} days: ${requests} requests merged.)`,
    );
  if (shown.length > 0) {
    lines.push(
      table(
        [
          "_id",
          "name",
          "type",
          "A/B",
          "channels",
          "rounds",
          "received",
          "open%*",
          "conv%*",
          "purchases",
          "revenue",
        ],
        shown.map((c) => [
          c._id,
          truncate(c.name, 28),
          c.schedule_type,
          c.is_ab_test ? "A/B" : "",
          c.channels.join(", "),
          c.task_count,
          formatNumber(c.received_count),
          percent(c.computed_open_rate),
          percent(c.computed_conversion_rate),
          formatNumber(c.purchase_count),
          money(c.revenue),
        ]),
      ),
    );
    const more = moreNotShown(total, shown.length, "raise top_n or filter");
    lines.push(
      [
        "*computed here: open% = opens/received, conv% = purchases by open/opens (as the service's conversion_rate).",
        more,
      ]
        .filter((part) => part !== "")
        .join(" "),
    );
  }
  lines.push(
    `Totals: ${plural(totals.task_count, "round")}, ${formatNumber(totals.sent_count)} sent, ${formatNumber(totals.received_count)} received, ${formatNumber(totals.open_count)} opens, ${formatNumber(totals.click_count)} clicks, ${formatNumber(totals.purchase_count)} purchases; revenue ${money(totals.revenue)}; cost ${money(totals.cost)}.`,
  );
  lines.push(`Against a CSV export of this window: ${vsExport.join(" ")}`);
  if (tasks !== undefined) {
    lines.push(
      table(
        [
          "task _id",
          "campaign",
          `scheduled (${zoneLabel(zone)})`,
          "channel",
          "received",
          "opens",
          "purchases",
        ],
        tasks
          .slice(0, TASKS_IN_TEXT)
          .map((t) => [
            t._id,
            t.campaign_id,
            `${DateTime.fromISO(t.scheduled_at, { zone }).toFormat("yyyy-MM-dd HH:mm")}${t.aggregating ? " (aggregating)" : ""}`,
            t.channel,
            formatCount(t.received_count),
            formatCount(t.open_count),
            formatCount(t.purchase_count),
          ]),
      ),
    );
    const inStructured = tasks.length - Math.min(TASKS_IN_TEXT, tasks.length);
    const notReturned = tasksNotShown ?? 0;
    const notes = [
      inStructured > 0
        ? `${plural(inStructured, "older round")} in structuredContent.tasks only`
        : "",
      notReturned > 0
        ? `${plural(notReturned, "older round")} not returned at all (narrow the window or filter by campaign_ids)`
        : "",
    ].filter((n) => n !== "");
    if (notes.length > 0) lines.push(`Newest rounds first; ${notes.join("; ")}.`);
  }
  lines.push(
    shown.length === 0
      ? `No campaign has rounds in this window with these filters. Next: ${nextStep}.`
      : split !== undefined
        ? `Next: ${split}: ${nextStep}.`
        : `Next: export the top campaign's raw events for this window with ${nextStep}.`,
  );
  return lines.join("\n");
}
