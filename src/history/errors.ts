/**
 * A history operation that could not be done: the message says what happened and what to do
 * next, for check_export, `sync` and the log. It names files and lines, never a file's rows.
 */
export class HistoryError extends Error {
  override name = "HistoryError";
  constructor(
    message: string,
    readonly code:
      | "not_found"
      | "not_campaign_export"
      | "not_scenario_export"
      | "malformed_file"
      | "unknown_job"
      | "busy"
      | "corrupt_catalogue"
      | "missing_files"
      | "cancelled",
  ) {
    super(message);
  }
}

/** Another process committed between this one's plan and its commit: plan again. */
export class CatalogueConflictError extends Error {
  override name = "CatalogueConflictError";
}
