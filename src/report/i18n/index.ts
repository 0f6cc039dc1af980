import { warningText as analysisWarningText } from "../../analysis/i18n/warning-text.js";
import { type Formats, formatsFor } from "../view/locale-format.js";
import { type Count, en, type ReportMessages } from "./en.js";
import { ko } from "./ko.js";
import { LANG_LOCALES, type Lang } from "./lang.js";

/**
 * The report's words and figures: the catalogue of a language (en.ts, ko.ts) and the formats of a
 * locale, handed together to the model's builders.
 */

export { defaultLang, isLang, LANG_LOCALES, type Lang, langOfLocale } from "./lang.js";
export type { Count, ReportMessages };

export const CATALOGUES: Record<Lang, ReportMessages> = { en, ko };

/** What the model writes its text with: the language's words and the locale's formats. */
export interface ReportText {
  lang: Lang;
  m: ReportMessages;
  f: Formats;
}

/**
 * The words of `lang` and the formats of `locale` (a host's tag; by default the language's own
 * locale). A host in de-DE reads English words with German numbers.
 */
export function reportText(lang: Lang = "en", locale?: string): ReportText {
  return { lang, m: CATALOGUES[lang], f: formatsFor(locale ?? LANG_LOCALES[lang]) };
}

/** A count as the messages take it: the number and its text in the locale. */
export function counted(t: ReportText, n: number): Count {
  return { n, text: t.f.value(n, "count") };
}

/**
 * A value of the file as the page shows it: the analysis writes `(none)` and `(empty)` where the
 * file left a field empty (and "" where it keeps it so); the page says that in its language.
 */
export function fileValue(t: ReportText, value: string): string {
  if (value === "" || value === en.page.none) return t.m.page.none;
  if (value === en.page.empty) return t.m.page.empty;
  return value;
}

/** Amounts by currency, a currency the file did not give named in the page's language. */
export function moneyText(t: ReportText, amounts: Record<string, number>): string {
  return t.f.money(
    Object.fromEntries(Object.entries(amounts).map(([code, v]) => [fileValue(t, code), v])),
  );
}

/** A warning of the analysis in the page's language (see analysis/i18n/warning-text.ts). */
export function warningText(text: string, m: ReportMessages): string {
  return analysisWarningText(text, m.readout);
}
