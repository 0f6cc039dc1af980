import type { Lang } from "./lang.js";
import { type SummaryMessages, summaryEn } from "./summary-en.js";
import { summaryKo } from "./summary-ko.js";

/**
 * The summary text's catalogues, one per language with the same keys (summary-ko.ts is typed by
 * summary-en.ts); the readout words they share with the report page are in readout-*.ts.
 */

export { isLang, type Lang } from "./lang.js";
export type { MoreAt, SummaryMessages } from "./summary-en.js";
export { warningText } from "./warning-text.js";

export const SUMMARY_CATALOGUES: Record<Lang, SummaryMessages> = { en: summaryEn, ko: summaryKo };
