import { resolve } from "node:path";

/**
 * Files this process is reading (a summary or a query running over them): the retention sweep
 * never removes one of them. Counted, so two readers of the same file both have to finish.
 */
const readers = new Map<string, number>();

/** Runs `work` with `path` marked in use until it settles. */
export async function withFileInUse<T>(path: string, work: () => Promise<T>): Promise<T> {
  const key = resolve(path);
  readers.set(key, (readers.get(key) ?? 0) + 1);
  try {
    return await work();
  } finally {
    const left = (readers.get(key) ?? 1) - 1;
    if (left <= 0) readers.delete(key);
    else readers.set(key, left);
  }
}

export function isFileInUse(path: string): boolean {
  return readers.has(resolve(path));
}

/** Runs `work` with every one of `paths` marked in use (see withFileInUse). */
export function withFilesInUse<T>(paths: string[], work: () => Promise<T>): Promise<T> {
  const [first, ...rest] = paths;
  if (first === undefined) return work();
  return withFileInUse(first, () => withFilesInUse(rest, work));
}
