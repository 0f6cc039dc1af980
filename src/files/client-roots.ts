import { stat } from "node:fs/promises";
import { isAbsolute, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { log } from "../log.js";

/**
 * Asks the client for its roots (`roots/list`), each as sent, checked here one by one: undefined
 * when it offers none (no `roots` capability); rejects when the request fails or times out.
 */
export type RootsRequest = () => Promise<readonly unknown[] | undefined>;

/**
 * The folders the client offers as MCP roots (stdio with CRM_READ_ROOTS=1), as it last listed
 * them. A list that changes replaces the earlier one; a list that cannot be had leaves none (and
 * is asked for again by the next file check), so a folder the user has taken back is never read
 * on the strength of an older answer. A file check waits for an answer under way, so a call
 * right after start-up or a change sees the new list.
 */
export class ClientRoots {
  #request: RootsRequest | undefined;
  #folders: readonly string[] = [];
  #latest: Promise<void> | undefined;
  #failed = false;
  #generation = 0;

  /** Where the roots come from: the connected client. Until then there are none. */
  follow(request: RootsRequest): void {
    this.#request = request;
  }

  /** Asks the client again (after `initialized` and on each `notifications/roots/list_changed`). */
  refresh(): Promise<void> {
    const request = this.#request;
    if (request === undefined) return Promise.resolve();
    const generation = ++this.#generation;
    this.#failed = false;
    const run = (async () => {
      let failed = false;
      const folders = await request().then(
        (roots) => (roots === undefined ? noRoots() : rootFolders(roots)),
        (error: unknown) => {
          failed = true;
          log.warn("could not list the client's MCP roots; none are read until it lists them", {
            error: error instanceof Error ? error.message : String(error),
          });
          return [];
        },
      );
      // An older answer arriving after a newer one must not overwrite it.
      if (generation === this.#generation) {
        this.#folders = folders;
        this.#failed = failed;
      }
    })();
    this.#latest = run;
    return run;
  }

  /**
   * The folders, once every request under way has been answered; asked for on demand when never
   * asked yet or when the last request failed.
   */
  async folders(): Promise<readonly string[]> {
    if (this.#request === undefined) return [];
    if (this.#latest === undefined || this.#failed) void this.refresh();
    for (;;) {
      const latest = this.#latest;
      await latest;
      if (latest === this.#latest) return this.#folders;
    }
  }
}

function noRoots(): string[] {
  log.info("CRM_READ_ROOTS is on, but the client offers no MCP roots");
  return [];
}

/**
 * The folders among `roots`: `file://` URIs of existing directories, as absolute paths. Any other
 * root (another scheme, a file, a path that does not exist, no URI at all) is left out, and the
 * log says why: one odd root does not cost the user the others.
 */
export async function rootFolders(roots: readonly unknown[]): Promise<string[]> {
  const folders: string[] = [];
  for (const root of roots) {
    const uri = (root as { uri?: unknown } | null)?.uri;
    const path = typeof uri === "string" ? localPath(uri) : undefined;
    const problem =
      path === undefined ? "not a file:// URI of a local path" : await notFolder(path);
    if (path !== undefined && problem === undefined) {
      if (!folders.includes(path)) folders.push(path);
    } else {
      log.info("an MCP root is not read", { root: String(uri), why: problem });
    }
  }
  return folders;
}

function localPath(uri: string): string | undefined {
  if (!uri.startsWith("file://")) return undefined;
  try {
    const path = fileURLToPath(uri);
    return isAbsolute(path) ? resolve(path) : undefined;
  } catch {
    // A host other than localhost, or an encoded separator: not a path of this machine.
    return undefined;
  }
}

async function notFolder(path: string): Promise<string | undefined> {
  const info = await stat(path).catch(() => undefined);
  if (info === undefined) return "does not exist";
  return info.isDirectory() ? undefined : "not a folder";
}
