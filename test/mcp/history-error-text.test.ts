import { describe, expect, it } from "vitest";
import { HistoryError } from "../../src/history/errors.js";
import { errorText } from "../../src/mcp/error-text.js";

/**
 * A HistoryError's text: what happened and the next step of its code, each once. Codes whose
 * messages carry their step keep them as written; the others get theirs.
 */

type Code = HistoryError["code"];

const text = (message: string, code: Code) =>
  errorText(new HistoryError(message, code), "query_export");

describe("HistoryError text", () => {
  it.each<[Code, string, RegExp]>([
    [
      "unknown_job",
      "job exp_1 has no downloaded file yet; it is added to the history once its file is downloaded.",
      /downloaded\. check_export with the job_id downloads it; the history then adds it on its own\.$/,
    ],
    [
      "missing_files",
      "a file of the history is missing (/data/history/x).",
      /missing \(\/data\/history\/x\)\. Check that CRM_DATA_DIR .* restore what is missing\.$/,
    ],
    [
      "cancelled",
      "adding the export to the history was cancelled.",
      /cancelled\. The export is added at the server's next start, or by `crm-insights-mcp sync`\.$/,
    ],
    [
      "not_scenario_export",
      '"/data/a.csv" is not a scenario XLSX export; it cannot be added to the scenario history.',
      /history\. Only a scenario_daily_metrics export \(\.xlsx\) goes there: .*check_export with the job_id\)\.$/,
    ],
  ])("%s: the message, then its next step", (code, message, expected) => {
    const said = text(message, code);
    expect(said).toMatch(/^Error in query_export: /);
    expect(said).toMatch(expected);
  });

  it.each<[Code, string]>([
    [
      "busy",
      "the history in /d stayed locked by another process; nothing was changed. Retry shortly.",
    ],
    [
      "corrupt_catalogue",
      "the history catalogue /d/catalogue.json cannot be read (it is not JSON). Nothing was changed. Restore it from a backup, or move it aside to start the history again.",
    ],
    [
      "malformed_file",
      '"/d/a.csv" cannot be added to the history: line 9: it is cut short. Export it again: start_export with the same arguments and force: true.',
    ],
    [
      "not_scenario_export",
      "Not a scenario export: no sheet has the summary header. Check that the file is a scenario_daily_metrics export.",
    ],
  ])("%s: a message that names its own step is kept as written", (code, message) => {
    expect(text(message, code)).toBe(`Error in query_export: ${message}`);
  });
});
