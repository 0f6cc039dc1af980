import { open, realpath, stat } from "node:fs/promises";
import { extname, sep } from "node:path";
import { CAMPAIGN_CSV_COLUMNS } from "../api/schemas.js";
import { QueryError } from "./errors.js";

/** One export file a query reads: its real path, what it holds, and the job it came from. */
export interface QuerySource {
  path: string;
  kind: "campaign_csv" | "scenario_xlsx";
  /** The export job the file was downloaded for; null for a file given by path. */
  jobId: string | null;
  bytes: number;
}

/** Most files one query may span: each becomes a path DuckDB may read, and a line of the view. */
export const MAX_QUERY_FILES = 50;

/**
 * Resolves a file with realpath (a link cannot smuggle in another file), checks that it is a
 * regular .csv or .xlsx export, and, for a CSV, that its header is the campaign export's.
 */
export async function resolveSource(path: string, jobId: string | null): Promise<QuerySource> {
  let real: string;
  try {
    real = await realpath(path);
  } catch {
    throw new QueryError(
      `file not found: ${JSON.stringify(path)}. Pass the file_path of a downloaded export, or its job_id.`,
      "not_found",
    );
  }
  const info = await stat(real);
  const ext = extname(real).toLowerCase();
  if (!info.isFile() || (ext !== ".csv" && ext !== ".xlsx")) {
    throw new QueryError(
      `${JSON.stringify(path)} is not a .csv (campaign) or .xlsx (scenario) export file.`,
      "unsupported_file",
    );
  }
  if (ext === ".csv") await checkCampaignHeader(real, path);
  return {
    path: real,
    kind: ext === ".csv" ? "campaign_csv" : "scenario_xlsx",
    jobId,
    bytes: info.size,
  };
}

const EXPECTED_HEADER = CAMPAIGN_CSV_COLUMNS.join(",");

/** A CSV is read with fixed column names and types, so another file's header is refused first. */
async function checkCampaignHeader(real: string, shown: string): Promise<void> {
  const handle = await open(real, "r");
  try {
    const buffer = Buffer.alloc(EXPECTED_HEADER.length + 2);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const head = buffer.subarray(0, bytesRead).toString("utf8");
    const line = head.replace(/^\uFEFF/, "").split(/\r?\n/)[0];
    if (line !== EXPECTED_HEADER) {
      throw new QueryError(
        `${JSON.stringify(shown)} is not a campaign export: its first line is not the header ${EXPECTED_HEADER}. Query an unedited campaign_event_data export.`,
        "not_campaign_export",
      );
    }
  } finally {
    await handle.close();
  }
}

/**
 * Whether `real` lies inside `folder`, by whole path components after realpath on both: the
 * server reads only its own data folder for a model, whatever path the model writes.
 */
export async function isInsideFolder(real: string, folder: string): Promise<boolean> {
  const root = await realpath(folder).catch(() => undefined);
  if (root === undefined) return false;
  return real.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
}

/** A check for queryFiles: each file must lie inside `folder` (the server's data folder). */
export function requireInsideFolder(folder: string): (source: QuerySource) => Promise<void> {
  return async (source) => {
    if (await isInsideFolder(source.path, folder)) return;
    throw new QueryError(
      `${JSON.stringify(source.path)} is outside the data folder (${folder}); query_export reads only exports this server downloaded. Pass their job_ids, or run \`crm-insights-mcp query --sql ... FILE\` on other files.`,
      "outside_data_folder",
    );
  };
}

/** The same file named twice (by job and by path) is read once, keeping its job ID. */
export function uniqueSources(sources: QuerySource[]): QuerySource[] {
  const byPath = new Map<string, QuerySource>();
  for (const source of sources) {
    const seen = byPath.get(source.path);
    if (seen === undefined || (seen.jobId === null && source.jobId !== null)) {
      byPath.set(source.path, source);
    }
  }
  return [...byPath.values()];
}
