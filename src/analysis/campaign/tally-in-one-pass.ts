import { AnalysisError } from "../errors.js";
import { conversionTypeOf } from "../event-roles.js";
import { badColumnCount } from "./columns.js";
import { readRange } from "./range-reader.js";
import { rowHandler } from "./row-to-tally.js";
import { type CampaignTally, newTally, settleTally } from "./tally.js";

/** One thread reading the whole campaign CSV, and the checks made once the end is reached. */

export interface TallyOptions {
  conversionEventType?: string | undefined;
  signal?: AbortSignal | undefined;
  /** bytes per read (tests make it small) */
  chunkBytes?: number | undefined;
}

/** Reads the campaign export CSV at `path` (already resolved and size-checked) in one pass. */
export async function tallyCampaignRows(
  path: string,
  bytes: number,
  options: TallyOptions = {},
): Promise<CampaignTally> {
  const conversionType = conversionTypeOf(options.conversionEventType);
  const t = newTally(bytes);
  const end = await readRange(
    path,
    0,
    Number.POSITIVE_INFINITY,
    rowHandler(t, conversionType, true),
    options,
  );
  closeTally(t, end.endsWithNewline);
  return t;
}

/** The checks at the end of the file; adds a warning when it looks cut short. */
export function closeTally(t: CampaignTally, endsWithNewline: boolean): void {
  settleTally(t);
  if (!t.headerSeen) {
    // The tools refuse an empty file before reading it, in the same words (files/export-path.ts);
    // the summarize command gets here.
    throw new AnalysisError(
      "The file is empty: an export always holds at least its header (campaign CSV) or its sheets (scenario XLSX). Download or export it again.",
      "not_campaign_export",
    );
  }
  if (t.pendingBadRecord !== undefined) throw badColumnCount(t.pendingBadRecord, !endsWithNewline);
  // The service ends every row with a line break; a file without one was most likely cut short
  // (an interrupted download), which only shows when the cut falls inside the last column.
  if (!endsWithNewline && t.rows > 0) {
    if (t.lastJsonCut) {
      throw new AnalysisError(
        `The campaign CSV is malformed: line ${t.lastLine}, the last row, ends inside its JSON column and the file does not end with a line break: the file looks truncated (an interrupted download?). Download or export it again.`,
        "malformed_csv",
      );
    }
    t.warnings.push(
      `The file does not end with a line break, so it may be truncated (an interrupted download?); its last row (line ${t.lastLine}) was counted. If the numbers look low, download or export it again.`,
    );
  }
}
