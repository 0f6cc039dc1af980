/**
 * The report's two languages and how one is chosen: the view follows its host's locale (Korean
 * for any `ko` tag), a file is written in the language asked for (`--lang`, `lang`), by default
 * Korean where the application's time zone is Korea's. No words here: the server reads this
 * file alone when it writes a report.
 */

import type { Lang } from "../../analysis/i18n/lang.js";

export { isLang, type Lang } from "../../analysis/i18n/lang.js";

/** The locale whose numbers and dates a file in `lang` is written with. */
export const LANG_LOCALES: Record<Lang, string> = { ko: "ko-KR", en: "en-US" };

/** Korean for `ko`, `ko-KR`, `ko-Kore-KR` and the like; English for any other tag or none. */
export function langOfLocale(locale: string | undefined): Lang {
  return /^ko(?:[-_]|$)/i.test(locale?.trim() ?? "") ? "ko" : "en";
}

/** The report's language when none is asked for: Korean in Korea's zone, else English. */
export function defaultLang(timeZone: string): Lang {
  return timeZone === "Asia/Seoul" ? "ko" : "en";
}
