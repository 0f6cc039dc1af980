/**
 * A problem with the file being summarized (or how it was asked for). Messages are written for the
 * person who handed us the file: what is wrong, where (line or zip part), what to do. They never
 * quote the file's content.
 */
export class AnalysisError extends Error {
  override name = "AnalysisError";
  constructor(
    message: string,
    readonly code:
      | "not_found"
      | "unsupported_file"
      | "too_large"
      | "not_campaign_export"
      | "not_scenario_export"
      | "malformed_csv"
      | "malformed_xlsx"
      | "zip_bomb"
      | "aborted",
  ) {
    super(message);
  }
}
