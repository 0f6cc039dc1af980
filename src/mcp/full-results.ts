import { randomBytes } from "node:crypto";
import { readdir, readFile, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../file-io/atomic-file.js";

/**
 * Whole results that did not fit a tool's structuredContent budget, kept as JSON files in
 * CRM_DATA_DIR/results and served as `crm-result://<id>` resources, so that what a result left
 * out is one read away. Only the newest are kept: they are copies of what a tool can recompute.
 */
export const RESULT_RESOURCE_SCHEME = "crm-result";
const KEEP_NEWEST = 50;
const ID_PATTERN = /^[a-z_]+-\d{8}t\d{6}-[0-9a-f]{8}$/;

export interface SavedResult {
  id: string;
  uri: string;
  path: string;
}

export function resultsDir(dataDir: string): string {
  return join(dataDir, "results");
}

export function resultUri(id: string): string {
  return `${RESULT_RESOURCE_SCHEME}://${id}`;
}

/** Writes the whole result; its ID sorts by time, so pruning keeps the newest by name. */
export async function saveFullResult(
  dataDir: string,
  tool: string,
  value: unknown,
  now: number = Date.now(),
): Promise<SavedResult> {
  const stamp = new Date(now).toISOString().replace(/[-:]/g, "").slice(0, 15).toLowerCase();
  const id = `${tool}-${stamp}-${randomBytes(4).toString("hex")}`;
  const path = join(resultsDir(dataDir), `${id}.json`);
  await writeFileAtomic(path, JSON.stringify(value));
  await prune(resultsDir(dataDir));
  return { id, uri: resultUri(id), path };
}

/** The saved result, or undefined when the ID is unknown or malformed (never a path outside). */
export async function readFullResult(dataDir: string, id: string): Promise<string | undefined> {
  if (!ID_PATTERN.test(id)) return undefined;
  try {
    return await readFile(join(resultsDir(dataDir), `${id}.json`), "utf8");
  } catch {
    return undefined;
  }
}

export async function listFullResults(
  dataDir: string,
): Promise<Array<{ id: string; bytes: number }>> {
  const names = await readdir(resultsDir(dataDir)).catch(() => [] as string[]);
  const ids = names
    .filter((n) => n.endsWith(".json") && ID_PATTERN.test(n.slice(0, -5)))
    .map((n) => n.slice(0, -5))
    .sort(byTime)
    .reverse();
  return Promise.all(
    ids.map(async (id) => ({
      id,
      bytes: (await stat(join(resultsDir(dataDir), `${id}.json`)).catch(() => ({ size: 0 }))).size,
    })),
  );
}

/** By the time written in the ID, not by mtime: no comparison of file times with a clock. */
function byTime(a: string, b: string): number {
  return a.slice(a.indexOf("-") + 1).localeCompare(b.slice(b.indexOf("-") + 1));
}

async function prune(dir: string): Promise<void> {
  const names = (await readdir(dir).catch(() => [] as string[]))
    .filter((n) => n.endsWith(".json") && ID_PATTERN.test(n.slice(0, -5)))
    .sort(byTime);
  const old = names.slice(0, Math.max(0, names.length - KEEP_NEWEST));
  await Promise.all(old.map((n) => rm(join(dir, n), { force: true })));
}
