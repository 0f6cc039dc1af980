import { readFile } from "node:fs/promises";
import { writeFileAtomic } from "../file-io/atomic-file.js";
import {
  applyChange,
  type CatalogueChange,
  catalogueSchema,
  emptyCatalogue,
  type HistoryCatalogue,
} from "./catalogue.js";
import { CatalogueConflictError, HistoryError } from "./errors.js";
import type { CatalogueStore } from "./store.js";

const FORMAT = 1;

/**
 * The catalogue as one JSON file, replaced atomically by each commit (writeFileAtomic: the old
 * or the new text, never a mix). A file that cannot be read is an error, never a fresh start: a
 * fresh catalogue would name none of the history's files, and the sweep would remove them all.
 */
export class FileCatalogueStore implements CatalogueStore {
  readonly location: string;

  constructor(private readonly path: string) {
    this.location = path;
  }

  async read(): Promise<HistoryCatalogue> {
    let text: string;
    try {
      text = await readFile(this.path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return emptyCatalogue();
      throw error;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw this.corrupt("it is not JSON");
    }
    const format = (value as { format?: unknown } | null)?.format;
    if (format !== FORMAT) {
      throw this.corrupt(
        typeof format === "number" && format > FORMAT
          ? `it was written by a newer crm-insights-mcp (format ${format}); upgrade this one`
          : "it has no known format",
      );
    }
    const parsed = catalogueSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw this.corrupt(`${issue?.path.join(".") ?? "?"}: ${issue?.message ?? "invalid"}`);
    }
    return parsed.data;
  }

  async commit(generation: number, change: CatalogueChange): Promise<HistoryCatalogue> {
    const current = await this.read();
    if (current.generation !== generation) {
      throw new CatalogueConflictError(
        `the history catalogue moved from generation ${generation} to ${current.generation}`,
      );
    }
    const next = applyChange(current, change);
    await writeFileAtomic(this.path, `${JSON.stringify({ format: FORMAT, ...next })}\n`);
    return next;
  }

  async close(): Promise<void> {}

  private corrupt(why: string): HistoryError {
    return new HistoryError(
      `the history catalogue ${this.path} cannot be read (${why}). Nothing was changed. Restore it from a backup, or move it aside to start the history again (its Parquet files are then removed as files no catalogue names).`,
      "corrupt_catalogue",
    );
  }
}
