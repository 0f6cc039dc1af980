/**
 * Text taken from an export file (carrier messages, event types, group and branch names, sheet
 * names, headers) is third-party input: it must not be able to restyle, reorder or hide what the
 * reader sees, nor grow the output without bound. Every such string goes through safeText when
 * the result is built; render.ts escapes markdown on top (markdownText in src/format.ts) where it writes markdown.
 */

// Control characters, bidi overrides/isolates/marks, zero-width characters and the BOM.
const UNSAFE_CHARS = /[\p{Cc}\u200B-\u200F\u202A-\u202E\u2060-\u2069\uFEFF\u061C\u2028\u2029]+/gu;

/** Unsafe characters out, whitespace (newlines included) collapsed, cut to `maxChars`. */
export function safeText(text: string, maxChars = 160): string {
  const clean = text.replace(UNSAFE_CHARS, " ").replace(/\s+/g, " ").trim();
  if (clean.length <= maxChars) return clean;
  const chars = Array.from(clean);
  return chars.length <= maxChars ? clean : `${chars.slice(0, maxChars - 1).join("")}…`;
}
