import type { CatalogueChange, HistoryCatalogue } from "./catalogue.js";

/**
 * Where the catalogue is kept: a JSON file in the history folder (catalogue-file.ts, the
 * default) or the ledger's PostgreSQL database (catalogue-postgres.ts), shared by every server
 * process of a team. Both pass one behaviour suite (test/history/catalogue-suite.ts).
 *
 * Commits are made under the history's lock (file-io/file-lock.ts, held by commit.ts), so the
 * stores need no lock of their own; the generation check still refuses a commit planned on a
 * catalogue that changed since, whoever changed it.
 */
export interface CatalogueStore {
  /** Where the catalogue lives, for messages (a path, or the database without credentials). */
  readonly location: string;
  read(): Promise<HistoryCatalogue>;
  /**
   * Applies `change` when the catalogue is still at `generation`, in one atomic step, and returns
   * the new catalogue; throws CatalogueConflictError when it is not.
   */
  commit(generation: number, change: CatalogueChange): Promise<HistoryCatalogue>;
  close(): Promise<void>;
}
