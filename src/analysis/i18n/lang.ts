/** The languages people read our text in: Korean (the service's customers) and English. */
export type Lang = "ko" | "en";

export function isLang(value: unknown): value is Lang {
  return value === "ko" || value === "en";
}
