import { withDeadline, withSession } from "../query/run.js";
import { toJsonValue } from "../query/values.js";
import { type HistoryCampaign, historyCampaigns } from "./campaigns.js";
import { HISTORY_EXAMPLES } from "./examples.js";
import {
  type HistoryQueryOptions,
  type HistorySource,
  historySessionOptions,
  withHistoryTables,
} from "./query.js";

/**
 * What the history holds, for query_export with `history: true` and no `sql`: the tables with
 * their columns and rows, the campaigns (capped), the span of round dates, and example queries
 * across campaigns and time (each runs on any history, tested on the sandbox's).
 */
export interface HistoryDescription {
  tables: { name: string; rows: number; columns: { name: string; type: string }[] }[];
  campaigns: HistoryCampaign[];
  campaigns_total: number;
  /** First and last round `scheduled_at` kept; null when the history is empty. */
  rounds_from: string | null;
  rounds_to: string | null;
  rows: number;
  exports: number;
  examples: { title: string; sql: string }[];
}

const MAX_CAMPAIGNS = 30;

export function describeHistory(
  history: HistorySource,
  options: Omit<HistoryQueryOptions, "sql" | "maxRows" | "maxChars">,
): Promise<HistoryDescription> {
  return withHistoryTables(history, options.conversionEventType, (extra, catalogue) => {
    const session = historySessionOptions(extra, options);
    return withSession(session, (_duck, opened) =>
      withDeadline(opened, session, async () => {
        const tables: HistoryDescription["tables"] = [];
        for (const name of [
          "history",
          "history_campaigns",
          "history_messages",
          "history_scenario_days",
        ]) {
          const c = opened.connection;
          const columns = (await c.runAndReadAll(`DESCRIBE ${name}`)).getRows().map((r) => ({
            name: String(r[0]),
            type: String(r[1]),
          }));
          const count = (await c.runAndReadAll(`SELECT count(*) FROM ${name}`)).getRows();
          tables.push({ name, rows: Number(toJsonValue(count[0]?.[0] ?? 0)), columns });
        }
        const campaigns = historyCampaigns(catalogue);
        const first = campaigns.map((c) => c.first_scheduled_at).sort()[0] ?? null;
        const last =
          campaigns
            .map((c) => c.last_scheduled_at)
            .sort()
            .at(-1) ?? null;
        return {
          tables,
          campaigns: campaigns.slice(0, MAX_CAMPAIGNS),
          campaigns_total: campaigns.length,
          rounds_from: first,
          rounds_to: last,
          rows: campaigns.reduce((sum, c) => sum + c.rows, 0),
          exports: catalogue.exports.length,
          examples: HISTORY_EXAMPLES.map(({ title, sql }) => ({ title, sql })),
        };
      }),
    );
  });
}
