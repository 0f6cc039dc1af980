import { z } from "zod";
import { callHint, formatCount, moreNotShown, table, tableCell } from "../../format.js";
import type { History, HistoryDescription } from "../../history/index.js";
import type { ToolCall, ToolRuntime } from "../../mcp/tool.js";
import { QueryError } from "../../query/index.js";

/**
 * query_export's `history: true`: the history this server keeps (src/history), read once the
 * exports this process is adding have been added (within the query's time limit), and its
 * description as the model reads it.
 */

/** The history a call reads, and whether additions were still running when it was read. */
export interface HeldHistory {
  history: History;
  stillAdding: boolean;
}

export async function heldHistory(runtime: ToolRuntime, call: ToolCall): Promise<HeldHistory> {
  const history = await runtime.history.history();
  if (history === undefined) {
    throw new QueryError(
      "the history of exports is off in this server (CRM_HISTORY=off), so no export is kept for questions across campaigns. Query downloaded exports with job_ids or files instead, or remove CRM_HISTORY=off from the server's configuration and restart it: the exports it downloaded meanwhile are then added.",
      "bad_input",
    );
  }
  // An export this process just downloaded is being added in the background: wait for it, so
  // that the answer holds it, but no longer than a query may run.
  const settled = await within(
    runtime.history.settled(),
    runtime.config.query.timeoutSeconds * 1000,
    call,
  );
  return { history, stillAdding: !settled };
}

/** True when `work` ended within `ms`; false when the time passed or the call was cancelled. */
async function within(work: Promise<void>, ms: number, call: ToolCall): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stopped = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    onAbort = () => resolve(false);
    call.signal.addEventListener("abort", onAbort, { once: true });
    if (call.signal.aborted) resolve(false);
  });
  try {
    return await Promise.race([work.then(() => true as const), stopped]);
  } finally {
    clearTimeout(timer);
    if (onAbort !== undefined) call.signal.removeEventListener("abort", onAbort);
  }
}

/** What to do when the history holds no export: no named call, each needs the model's choice. */
export const EMPTY_HISTORY_STEP =
  "The history of exports holds no export yet. Every campaign export this server downloads is added to it: export campaigns with start_export (campaign_id from campaign_metrics), or run `crm-insights-mcp sync` to add every campaign of the last 30 days; then ask again.";

/** Exports still being added when the call read the history. */
export const STILL_ADDING_NOTE =
  "Exports downloaded moments ago were still being added to the history and may be missing from this answer; check_export with their job_id shows history.status: ask again once it is kept.";

const column = z.object({ name: z.string(), type: z.string() });

/** What query_export with history: true and no sql returns (history/describe.ts). */
export const historyDescriptionSchema = z.object({
  campaigns: z.array(
    z.object({
      campaign_id: z.string(),
      name: z.string().nullable(),
      channels: z.array(z.string()),
      rounds: z.number(),
      first_scheduled_at: z.string(),
      last_scheduled_at: z.string(),
      rows: z.number(),
      exports: z.array(z.string()),
    }),
  ),
  campaigns_total: z.number(),
  rounds_from: z.string().nullable(),
  rounds_to: z.string().nullable(),
  rows: z.number(),
  exports: z.number(),
  tables: z.array(z.object({ name: z.string(), rows: z.number(), columns: z.array(column) })),
  examples: z.array(z.object({ title: z.string(), sql: z.string() })),
});

/** The example questions as ready calls: each runs as written. */
export function exampleCall(sql: string): string {
  return callHint("query_export", { history: true, sql });
}

const CAMPAIGNS_SHOWN = 15;

/** The history's description as markdown: what it holds, its tables, campaigns and examples. */
export function renderHistoryDescription(d: HistoryDescription): string {
  if (d.exports === 0) return EMPTY_HISTORY_STEP;
  const lines = [
    `**History of exports** (every export this server downloaded, each send round once, from the newest export holding it): ${formatCount(d.campaigns_total)} campaign(s) from ${formatCount(d.exports)} export(s), ${formatCount(d.rows)} event rows, rounds from ${d.rounds_from ?? "-"} to ${d.rounds_to ?? "-"}.`,
  ];
  for (const t of d.tables) {
    if (t.rows === 0 && t.name !== "history") continue;
    const columns = t.columns.map((c) => `${c.name} ${c.type}`).join(", ");
    lines.push(`**${t.name}** (${formatCount(t.rows)} rows): ${tableCell(columns)}`);
  }
  const shown = d.campaigns.slice(0, CAMPAIGNS_SHOWN);
  // Names are known only where an export was added with one: a column of NULLs says nothing.
  const named = shown.some((c) => c.name !== null);
  lines.push(
    table(
      ["campaign_id", ...(named ? ["name"] : []), "channels", "rounds", "first", "last", "rows"],
      shown.map((c) => [
        c.campaign_id,
        ...(named ? [c.name ?? "NULL"] : []),
        c.channels.join(" "),
        formatCount(c.rounds),
        c.first_scheduled_at,
        c.last_scheduled_at,
        formatCount(c.rows),
      ]),
    ),
  );
  const more = moreNotShown(d.campaigns_total, shown.length, "SELECT * FROM history_campaigns");
  if (more !== "") lines.push(more);
  lines.push("**Example questions** (each call runs as written):");
  for (const e of d.examples) lines.push(`- ${e.title}: ${exampleCall(e.sql)}`);
  return lines.join("\n");
}
