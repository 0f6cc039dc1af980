/**
 * The one place that keeps secrets out of text we show or write: error messages, tool results,
 * log lines and files. Keys are registered once at start-up; download URLs lose their query
 * string (the pre-signed signature) wherever they appear.
 */
const secrets = new Set<string>();
/** Every registered form, longest first, so a longer form is masked before a part of it. */
let forms: string[] = [];
/**
 * A service error may quote part of a key ("sk_crm_738c6dca13b27b819..."), cut where it liked:
 * every run of FRAGMENT characters of any form of a key that mixes letters and digits, as
 * generated keys do, is masked too. Runs of letters alone are left: a key with words in it
 * ("acme-production-2026") would otherwise mask "acme-pro..." in every campaign name; shorter
 * runs match ordinary text too often.
 */
const FRAGMENT = 8;
const fragments = new Set<string>();
/**
 * A bit per rolling hash (mod FILTER_BITS) of every fragment: a text position whose window's
 * bit is clear cannot start a fragment, so the string slice and set lookup run only on the rare
 * positions whose bit is set.
 */
const FILTER_BITS = 1 << 20;
const filter = new Uint32Array(FILTER_BITS / 32);
const BASE = 0x01000193;
/** BASE^(FRAGMENT-1) mod 2^32, to take the outgoing character off a rolling hash. */
const BASE_TOP = Array.from({ length: FRAGMENT - 1 }).reduce<number>(
  (power) => Math.imul(power, BASE),
  1,
);

function windowHash(text: string, start: number): number {
  let hash = 0;
  for (let i = start; i < start + FRAGMENT; i++)
    hash = (Math.imul(hash, BASE) + text.charCodeAt(i)) | 0;
  return hash;
}

/**
 * Registers a value that must never appear in output, together with the forms it takes once
 * escaped: inside JSON (once, or twice when a JSON text is itself stringified, as log fields and
 * tool results are) and percent-encoded in a URL's query or path. A key with `"`, `\` or `+`
 * would otherwise slip through in its escaped form. Values shorter than 4 characters are ignored
 * (masking them would mangle ordinary text); the configuration refuses keys shorter than 8.
 */
export function registerSecret(value: string | undefined): void {
  if (value === undefined || value.length < 4 || secrets.has(value)) return;
  secrets.add(value);
  const json = jsonEscaped(value);
  const added = [
    value,
    json,
    jsonEscaped(json),
    encodeURIComponent(value),
    new URLSearchParams({ k: value }).toString().slice(2),
    // As a URL parser writes it into a path (`"` becomes %22; http(s) turns `\` into `/`).
    pathEncoded(value),
    pathEncoded(value).replace(/\\/g, "/"),
    // Exactly as this runtime's URL parser writes it into a path: the set of characters it
    // percent-encodes has changed between Node versions (Node 24 also encodes `^`).
    ...parsedPath(value),
  ];
  forms = [...new Set([...forms, ...added])].sort((a, b) => b.length - a.length);
  for (const form of added) {
    for (let i = 0; i + FRAGMENT <= form.length; i++) {
      const fragment = form.slice(i, i + FRAGMENT);
      if (!/[0-9]/.test(fragment) || !/\p{L}/u.test(fragment)) continue;
      fragments.add(fragment);
      const bit = windowHash(form, i) & (FILTER_BITS - 1);
      filter[bit >>> 5] = (filter[bit >>> 5] ?? 0) | (1 << (bit & 31));
    }
  }
}

function parsedPath(value: string): string[] {
  try {
    return [new URL(`https://host.invalid/${value}`).pathname.slice(1)];
  } catch {
    return [];
  }
}

function pathEncoded(value: string): string {
  return value.replace(
    /[\s"<>`{}]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`,
  );
}

function jsonEscaped(value: string): string {
  return JSON.stringify(value).slice(1, -1);
}

// A backslash ends a URL too: inside JSON text a URL's closing quote is escaped (\"), and masking
// the backslash with the query would leave the quote bare and the JSON broken.
const URL_QUERY = /(https?:\/\/[^\s"'<>?#\\]+)\?[^\s"'<>#\\]*/gi;
// The scheme ("Bearer", "Basic") is kept and the credential after it masked.
const AUTH_HEADER =
  /(authorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token|dpop)\s+)?)[^\s"',}]+/gi;

/** Returns `text` with every registered secret, URL query string and Authorization value masked. */
export function redact(text: string): string {
  let out = text;
  for (const form of forms) {
    if (out.includes(form)) out = out.split(form).join("[REDACTED]");
  }
  out = maskFragments(out);
  return out.replace(URL_QUERY, "$1?[REDACTED]").replace(AUTH_HEADER, "$1[REDACTED]");
}

/**
 * Masks every run of text covered by FRAGMENT-character windows that occur in a key, in one pass
 * (a set lookup per position: linear in the text, whatever the number of keys). Overlapping or
 * touching windows join into one masked run.
 */
function maskFragments(text: string): string {
  if (fragments.size === 0 || text.length < FRAGMENT) return text;
  let out = "";
  let copied = 0;
  let runStart = -1;
  let runEnd = -1;
  let hash = windowHash(text, 0);
  for (let i = 0; i + FRAGMENT <= text.length; i++) {
    if (i > 0) {
      // Roll: drop the character leaving the window, add the one entering it.
      hash =
        (Math.imul(hash - Math.imul(text.charCodeAt(i - 1), BASE_TOP), BASE) +
          text.charCodeAt(i + FRAGMENT - 1)) |
        0;
    }
    const bit = hash & (FILTER_BITS - 1);
    if (((filter[bit >>> 5] ?? 0) & (1 << (bit & 31))) === 0) continue;
    if (!fragments.has(text.slice(i, i + FRAGMENT))) continue;
    if (i > runEnd) {
      if (runStart >= 0) {
        out += `${text.slice(copied, runStart)}[REDACTED]`;
        copied = runEnd;
      }
      runStart = i;
    }
    runEnd = i + FRAGMENT;
  }
  if (runStart < 0) return text;
  return `${out}${text.slice(copied, runStart)}[REDACTED]${text.slice(runEnd)}`;
}

/** A URL safe to show: scheme, host and path only (a key pasted into the path is masked too). */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return redact(`${parsed.protocol}//${parsed.host}${parsed.pathname}`);
  } catch {
    return redact(url);
  }
}
