import { stat } from "node:fs/promises";

/**
 * True when `path` is a regular file (symlinks followed). A directory or a socket at a recorded
 * download path is not the file, so callers download again rather than hand it to the analysis.
 */
export async function isRegularFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
