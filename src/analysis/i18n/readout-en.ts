import type { CampaignSummary } from "../schemas.js";

/**
 * What the analysis found, in words a person reads: test verdicts, what the control group can
 * say, the analysis' warnings. Shared by the summary text (summary-en.ts) and the report page
 * (report/i18n). In English the analysis' own sentences in the result are already these words, so
 * the entries that take a result give back its text; readout-ko.ts writes them from the same
 * fields.
 */

export type ControlReadout = NonNullable<CampaignSummary["ab_test"]["control"]>;

export const readoutEn = {
  significant: "Significant at 95% confidence",
  notSignificant: "Not significant at 95% confidence",
  notEnoughData: "Not enough data to test",
  notTested: "Not tested: more than two arms",
  /** What comparing the control group with the send groups can and cannot say. */
  controlNote: (control: ControlReadout, _totals: CampaignSummary["totals"]): string =>
    control.note,
  /**
   * The analysis' warnings, one template per kind (the slot is the value it names). In English a
   * warning is shown as the analysis wrote it; these templates read it back into its value.
   */
  warnings: {
    truncated: (line: string) =>
      `The file does not end with a line break, so it may be truncated (an interrupted download?); its last row (line ${line}) was counted. If the numbers look low, download or export it again.`,
    noNumberInSheetName: (sheet: string) => `Daily sheet "${sheet}" has no #number in its name.`,
    noDailySheet: (node: string) => `Node #${node} has no daily sheet.`,
    noDateHeader: (sheet: string) => `Sheet "${sheet}" has no 날짜 header row and was skipped.`,
    badSummaryRow: (row: string) => `Summary row ${row} has a non-numeric # and was skipped.`,
  },
};

export type ReadoutMessages = typeof readoutEn;
