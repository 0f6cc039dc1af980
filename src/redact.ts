/**
 * The one place that keeps secrets out of text we show or write: error messages, tool results,
 * log lines and files. Keys are registered once at start-up; download URLs lose their query
 * string (the pre-signed signature) wherever they appear.
 */
const secrets = new Set<string>();
/** Every registered form, longest first, so a longer form is masked before a part of it. */
let forms: string[] = [];

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
  ];
  forms = [...new Set([...forms, ...added])].sort((a, b) => b.length - a.length);
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

const URL_QUERY = /(https?:\/\/[^\s"'<>?#]+)\?[^\s"'<>#]*/gi;
const AUTH_HEADER = /(authorization["']?\s*[:=]\s*["']?)[^\s"',}]+/gi;

/** Returns `text` with every registered secret, URL query string and Authorization value masked. */
export function redact(text: string): string {
  let out = text;
  for (const form of forms) {
    if (out.includes(form)) out = out.split(form).join("[REDACTED]");
  }
  return out.replace(URL_QUERY, "$1?[REDACTED]").replace(AUTH_HEADER, "$1[REDACTED]");
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
