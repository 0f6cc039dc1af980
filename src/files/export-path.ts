import { open, realpath, stat } from "node:fs/promises";
import { extname } from "node:path";
import { CAMPAIGN_CSV_COLUMNS } from "../api/csv-columns.js";
import {
  foldersText,
  hasOtherFolders,
  isInsideAny,
  type ReadableFolders,
} from "./readable-folders.js";

/**
 * The one rule by which summarize_export and query_export accept a file, and the one wording of
 * each refusal, so both tools answer the same problem the same way. With readable folders (the
 * tools: the data folder, CRM_READ_DIRS, MCP roots) a file is located first, from paths alone
 * (realpath, whole path components), so a file elsewhere is refused without a byte of it read,
 * and its refusal does not say whether it exists. Without them (the `summarize`/`query`
 * commands, the user's own shell) any file may be read.
 */

export type ExportFileProblem =
  | "not_found"
  | "outside_data_folder"
  | "unsupported_file"
  | "empty_file"
  | "not_campaign_export";

export class ExportFileError extends Error {
  override name = "ExportFileError";
  constructor(
    message: string,
    readonly code: ExportFileProblem,
  ) {
    super(message);
  }
}

/** An export file that passed the rule: its real path, what it holds and its size. */
export interface ExportFile {
  path: string;
  kind: "campaign_csv" | "scenario_xlsx";
  bytes: number;
}

const HEADER = CAMPAIGN_CSV_COLUMNS.join(",");

/**
 * Checks `path` (absolute) as an export file, in this order: inside one of `folders` when they
 * are given, present, a regular .csv or .xlsx file, not empty, and for a CSV the campaign export's
 * header as its first line. Throws ExportFileError with the shared text of the first problem.
 */
export async function checkExportFile(
  path: string,
  folders?: ReadableFolders,
): Promise<ExportFile> {
  const shown = JSON.stringify(path);
  if (folders !== undefined) await checkInsideFolder(path, folders);
  const real = await realpath(path).catch(() => undefined);
  if (real === undefined) {
    const next =
      folders === undefined
        ? "Pass the path of a campaign CSV or scenario XLSX export."
        : `Pass the job_id of an export (from start_export or check_export), or the absolute path of an export file in ${foldersText(folders, "or")}.`;
    throw new ExportFileError(`${shown} was not found. ${next}`, "not_found");
  }
  const info = await stat(real);
  const ext = extname(real).toLowerCase();
  if (!info.isFile() || (ext !== ".csv" && ext !== ".xlsx")) {
    const what = info.isFile()
      ? `its extension is ${JSON.stringify(extname(real) || "(none)")}`
      : "it is not a regular file";
    throw new ExportFileError(
      `${shown} is not an export file: ${what}. Only a campaign export (.csv) or a scenario export (.xlsx) is read.`,
      "unsupported_file",
    );
  }
  if (info.size === 0) throw new ExportFileError(emptyFileText(shown), "empty_file");
  if (ext === ".csv") await checkCampaignHeader(real, shown);
  return { path: real, kind: ext === ".csv" ? "campaign_csv" : "scenario_xlsx", bytes: info.size };
}

/**
 * Refuses `path` unless its real path (or the one it would have, when it does not exist) lies
 * inside one of `folders` (readable-folders.ts), judged by whole path components: `..` and links
 * out of a folder lead outside, and a missing file outside gets the same answer as an existing one.
 */
export async function checkInsideFolder(path: string, folders: ReadableFolders): Promise<void> {
  if (await isInsideAny(path, folders)) return;
  throw new ExportFileError(outsideText(JSON.stringify(path), folders), "outside_data_folder");
}

/** Why an empty file is refused and what to do (analysis/campaign/tally-in-one-pass.ts says it too). */
const EMPTY_EXPORT =
  "an export always holds at least its header (campaign CSV) or its sheets (scenario XLSX). Download or export it again.";

function emptyFileText(shown: string): string {
  return `${shown} is empty: ${EMPTY_EXPORT}`;
}

const SHELL =
  "or read it in your own shell with `crm-insights-mcp summarize FILE` or `crm-insights-mcp query --sql ... FILE`";
const ADD_FOLDER =
  "add its folder to CRM_READ_DIRS in the server's configuration (absolute folders, comma-separated)";

function outsideText(shown: string, folders: ReadableFolders): string {
  const next = `Pass the job_id of an export (from start_export or check_export), copy the file into the data folder, ${ADD_FOLDER}, ${SHELL}.`;
  if (!hasOtherFolders(folders)) {
    return `${shown} is outside the data folder (${folders.dataFolder}). summarize_export and query_export read only files in it, so that no other file of the machine they run on can be read through them. ${next}`;
  }
  return `${shown} is outside the folders summarize_export and query_export read: ${foldersText(folders, "and")}. No other file of the machine they run on can be read through them. ${next}`;
}

/** Enough bytes for the header, its fields quoted, a byte-order mark and the line break. */
const HEAD_BYTES = HEADER.length + 2 * CAMPAIGN_CSV_COLUMNS.length + 8;

/**
 * A CSV is read with the campaign export's fixed columns, so another file is refused on its first
 * line, as the summary's own read would (header fields may be quoted, a byte-order mark leads).
 */
async function checkCampaignHeader(real: string, shown: string): Promise<void> {
  const handle = await open(real, "r");
  let head: string;
  let whole: boolean;
  try {
    const buffer = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    head = buffer
      .subarray(0, bytesRead)
      .toString("utf8")
      .replace(/^\uFEFF/, "");
    whole = bytesRead < buffer.length;
  } finally {
    await handle.close();
  }
  // Only a byte-order mark or blank lines: nothing to read, whatever the tool.
  if (whole && head.trim() === "") {
    throw new ExportFileError(emptyFileText(shown), "empty_file");
  }
  const fields = (head.split(/\r?\n/)[0] ?? "").split(",").map(unquote);
  if (fields.join(",") !== HEADER) {
    throw new ExportFileError(
      `${shown} is not a campaign export: its first line must be the header of the service's campaign CSV, exactly these ${CAMPAIGN_CSV_COLUMNS.length} columns in order: ${CAMPAIGN_CSV_COLUMNS.join(", ")}. Check that the file is an unedited campaign_event_data export (start_export with type campaign_event_data).`,
      "not_campaign_export",
    );
  }
}

function unquote(field: string): string {
  return field.length >= 2 && field.startsWith('"') && field.endsWith('"')
    ? field.slice(1, -1)
    : field;
}
