import { checkExportFile, checkInsideFolder, ExportFileError } from "../files/export-path.js";
import { dataFolderOnly, type ReadableFolders } from "../files/readable-folders.js";
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
 * Resolves a file with realpath (a link cannot smuggle in another file) and checks it as
 * summarize_export does (files/export-path.ts): a regular, non-empty .csv or .xlsx export, a CSV
 * with the campaign export's header.
 */
export async function resolveSource(path: string, jobId: string | null): Promise<QuerySource> {
  const file = await asQueryError(checkExportFile(path));
  return { ...file, jobId };
}

/**
 * A check for queryFiles: each file must lie inside one of `folders` (a string: that data folder
 * alone). The query_export tool checks its paths before this (files/export-path.ts), before any
 * byte is read.
 */
export function requireInsideFolder(
  folders: ReadableFolders | string,
): (source: QuerySource) => Promise<void> {
  const readable = typeof folders === "string" ? dataFolderOnly(folders) : folders;
  return (source) => asQueryError(checkInsideFolder(source.path, readable));
}

/** The query's own error type, with the shared text of the file rule. */
async function asQueryError<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (!(error instanceof ExportFileError)) throw error;
    const code = error.code === "empty_file" ? "unsupported_file" : error.code;
    throw new QueryError(error.message, code);
  }
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
