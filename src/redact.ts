/**
 * The one place that keeps secrets out of text we show or write: error messages, tool results,
 * log lines and files. Keys are registered once at start-up; download URLs lose their query
 * string (the pre-signed signature) wherever they appear.
 */
const secrets = new Set<string>();

/** Registers a value that must never appear in output. Values shorter than 4 characters are ignored. */
export function registerSecret(value: string | undefined): void {
  if (value !== undefined && value.length >= 4) secrets.add(value);
}

const URL_QUERY = /(https?:\/\/[^\s"'<>?#]+)\?[^\s"'<>#]*/gi;
const AUTH_HEADER = /(authorization["']?\s*[:=]\s*["']?)[^\s"',}]+/gi;

/** Returns `text` with every registered secret, URL query string and Authorization value masked. */
export function redact(text: string): string {
  let out = text;
  for (const secret of secrets) {
    if (out.includes(secret)) out = out.split(secret).join("[REDACTED]");
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
