import { realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

/**
 * The folders whose files summarize_export and query_export read: always the data folder, then
 * the ones the user chose (CRM_READ_DIRS), then, over stdio with CRM_READ_ROOTS=1, the client's
 * MCP roots. One rule holds for all: a file is inside a folder when its real path is, judged by
 * whole path components (see isInsideAny).
 */
export interface ReadableFolders {
  /** The data folder in use. */
  dataFolder: string;
  /** CRM_READ_DIRS, in the order given. */
  readDirs: readonly string[];
  /** The client's MCP roots as it last listed them (file:// folders only). */
  roots: readonly string[];
}

/** Only the data folder: team mode without CRM_READ_DIRS, and a runtime without a client. */
export function dataFolderOnly(dataFolder: string): ReadableFolders {
  return { dataFolder, readDirs: [], roots: [] };
}

/** Every folder of `folders`, the data folder first. */
export function allFolders(folders: ReadableFolders): string[] {
  return [folders.dataFolder, ...folders.readDirs, ...folders.roots];
}

/** Whether any folder besides the data folder is readable. */
export function hasOtherFolders(folders: ReadableFolders): boolean {
  return folders.readDirs.length > 0 || folders.roots.length > 0;
}

/**
 * The folders in words, each group named by where it comes from: "the data folder (/d),
 * CRM_READ_DIRS (/a, /b) and the client's MCP roots (/r)"; `conjunction` joins the last group.
 */
export function foldersText(folders: ReadableFolders, conjunction: "and" | "or"): string {
  const groups = [`the data folder (${folders.dataFolder})`];
  if (folders.readDirs.length > 0) groups.push(`CRM_READ_DIRS (${folders.readDirs.join(", ")})`);
  if (folders.roots.length > 0) groups.push(`the client's MCP roots (${folders.roots.join(", ")})`);
  const last = groups.pop() as string;
  return groups.length === 0 ? last : `${groups.join(", ")} ${conjunction} ${last}`;
}

/**
 * Whether `path`'s real path (or the one it would have, when it does not exist) lies inside one
 * of the folders' real paths: `..` and links out of a folder lead outside, and a missing file
 * is located like an existing one, so "outside" never says whether a file exists.
 */
export async function isInsideAny(path: string, folders: ReadableFolders): Promise<boolean> {
  const real = await resolveExisting(path);
  for (const folder of allFolders(folders)) {
    if (isWithin(await resolveExisting(folder), real)) return true;
  }
  return false;
}

/** Whether `inner` lies inside `folder` (both real paths), judged by whole path components. */
function isWithin(folder: string, inner: string): boolean {
  const rel = relative(folder, inner);
  return rel !== "" && !isAbsolute(rel) && rel.split(sep)[0] !== "..";
}

/**
 * The real path `path` would have: the realpath of its nearest existing ancestor with the rest
 * appended. A missing file is thereby located like an existing one (a link to elsewhere among its
 * parents counts).
 */
async function resolveExisting(path: string): Promise<string> {
  let head = resolve(path);
  const rest: string[] = [];
  for (;;) {
    const real = await realpath(head).catch(() => undefined);
    if (real !== undefined) return join(real, ...rest.reverse());
    const parent = dirname(head);
    if (parent === head) return resolve(path);
    rest.push(basename(head));
    head = parent;
  }
}
