import { DateTime } from "luxon";
import { resolveExportRange } from "../api/dates.js";
import type { ExportCall } from "../exports/export-call.js";
import type { WantedExport } from "../exports/find-or-create.js";
import { requestKey } from "../ledger/request-key.js";
import type { ExportItem } from "./progress.js";
import type { SyncContext } from "./run.js";

/** One planned export as the export flow takes it: the request, its ledger key, its call. */

export function wantedExport(item: ExportItem, zone: string, now: number): WantedExport {
  const range = resolveExportRange({ from: item.from, to: item.to }, zone);
  const target = {
    type: "campaign_event_data" as const,
    targetId: item.campaign.id,
    fromDate: range.fromDate,
    toDate: range.toDate,
  };
  return {
    request: {
      type: "campaign_event_data",
      campaign_id: item.campaign.id,
      ...(range.from === undefined ? {} : { from: range.from }),
      ...(range.to === undefined ? {} : { to: range.to }),
    },
    key: requestKey(target),
    rangeEndsAt: DateTime.fromISO(item.to, { zone }).plus({ days: 1 }).startOf("day").toMillis(),
    context: {
      ...target,
      today: DateTime.fromMillis(now, { zone }).toISODate() ?? undefined,
    },
  };
}

export function exportCall(context: SyncContext, item: ExportItem): ExportCall {
  return {
    signal: context.signal,
    principal: context.principal,
    async progress(value, message, total) {
      const fraction =
        value !== undefined && total !== undefined && total > 0 ? value / total : undefined;
      context.progress.step(item, message.replace(/^.*?export job [0-9a-z]+: /i, ""), fraction);
    },
  };
}
