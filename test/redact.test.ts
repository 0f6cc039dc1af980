import { describe, expect, it } from "vitest";
import { log } from "../src/log.js";
import { redact, redactUrl, registerSecret } from "../src/redact.js";

describe("redact", () => {
  it("masks registered secrets wherever they appear", () => {
    registerSecret("sk-live-abcdef123");
    expect(redact("key sk-live-abcdef123 and again sk-live-abcdef123.")).toBe(
      "key [REDACTED] and again [REDACTED].",
    );
  });

  it("masks any 8 or more consecutive characters of a key, wherever a service error cut it", () => {
    const key = "sk_crm_738c6dca13b27b819f0e1d2c3b4a5968";
    registerSecret(key);
    const quoted = JSON.stringify({ message: `key "${key.slice(0, 24)}..." is not valid` });
    expect(redact(quoted)).toBe(JSON.stringify({ message: 'key "[REDACTED]..." is not valid' }));
    const grams = (text: string) =>
      Array.from({ length: Math.max(0, text.length - 7) }, (_, i) => text.slice(i, i + 8));
    const leaks = (text: string) => grams(key).filter((g) => text.includes(g));
    // Every cut of 8+ characters, at every offset, inside other text: nothing of 8 survives.
    for (let start = 0; start + 8 <= key.length; start += 3) {
      for (const length of [8, 9, 13, 24]) {
        const piece = key.slice(start, start + length);
        const out = redact(`error near ${piece}; retry`);
        expect(leaks(out), piece).toEqual([]);
        expect(out).toContain("error near ");
      }
    }
    // 7 characters are not a key: "sk_crm_" is how every key of the service starts.
    expect(redact("keys look like sk_crm_... ")).toBe("keys look like sk_crm_... ");
    // Words of a key with words in it stay readable; its letter-and-digit runs do not.
    registerSecret("acme-production-key-2026x");
    expect(redact("campaign acme-production launch")).toBe("campaign acme-production launch");
    expect(redact("quoted: key-2026x")).toBe("quoted: [REDACTED]");
    // Far into a long text, and twice.
    const long = `${"lorem ipsum ".repeat(200_000)}${key.slice(5, 20)} and ${key.slice(-9)}`;
    const masked = redact(long);
    expect(leaks(masked)).toEqual([]);
    expect(masked.endsWith("[REDACTED] and [REDACTED]")).toBe(true);
  });

  it("leaves fragments too short to be keys alone (config refuses keys under 8 characters)", () => {
    registerSecret("ab");
    registerSecret(undefined);
    expect(redact("ab cab")).toBe("ab cab");
  });

  it("masks a key with quotes, backslashes and pluses in its escaped forms too", () => {
    const key = 'Ab"c\\d{e}f^g+1234';
    registerSecret(key);
    const once = JSON.stringify({ key });
    const twice = JSON.stringify({ text: once });
    const query = `https://api.example.com/x?k=${encodeURIComponent(key)}`;
    const form = new URLSearchParams({ k: key }).toString();
    for (const text of [key, once, twice, encodeURIComponent(key), form, `see ${query}`]) {
      const out = redact(text);
      expect(out, text).toContain("[REDACTED]");
      expect(out).not.toContain("g+1234");
      expect(out).not.toContain("g%2B1234");
    }
    expect(redact(twice)).toBe(JSON.stringify({ text: JSON.stringify({ key: "[REDACTED]" }) }));
    expect(redactUrl(`https://x.example.com/${key}/f`)).not.toContain("1234");
  });

  it("keeps a key out of log lines whose fields are JSON-encoded", () => {
    const key = 'Lg"k\\+9z8y7x6';
    registerSecret(key);
    const lines: string[] = [];
    const original = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    try {
      log.warn("probe", { header: key, nested: { body: JSON.stringify({ key }) } });
    } finally {
      process.stderr.write = original;
    }
    expect(lines.join("")).toContain("probe");
    expect(lines.join("")).not.toContain("9z8y7x6");
  });

  it("masks URL query strings and Authorization values", () => {
    expect(redact("GET https://files.example.com/a.csv?X-Amz-Signature=abc&x=1 failed")).toBe(
      "GET https://files.example.com/a.csv?[REDACTED] failed",
    );
    expect(redact('{"Authorization": "unregistered-key-1"}')).toBe(
      '{"Authorization": "[REDACTED]"}',
    );
    expect(redact("authorization: other-key")).toBe("authorization: [REDACTED]");
    // With a scheme, the credential after it is what is masked.
    expect(redact("Authorization: Bearer abcdefgh12345678")).toBe(
      "Authorization: Bearer [REDACTED]",
    );
    expect(redact('{"authorization":"Basic dXNlcjpwYXNz"}')).toBe(
      '{"authorization":"Basic [REDACTED]"}',
    );
  });

  it("redactUrl keeps scheme, host and path, masking a secret in the path", () => {
    registerSecret("path-secret-999");
    expect(redactUrl("https://user:pw@files.example.com:8443/a/b.csv?sig=1#frag")).toBe(
      "https://files.example.com:8443/a/b.csv",
    );
    expect(redactUrl("https://x.example.com/path-secret-999/f")).toBe(
      "https://x.example.com/[REDACTED]/f",
    );
    expect(redactUrl("not a url ?sig=path-secret-999")).not.toContain("path-secret-999");
  });
});

describe("URLs inside JSON text", () => {
  it("masks a query string without breaking the JSON around it, escaped once or twice", () => {
    const value = { rows: [['{"url":"https://shop.example/p?sig=abc&x=1"}', 2]] };
    const once = redact(JSON.stringify(value));
    const parsed = JSON.parse(once) as typeof value;
    expect(parsed.rows[0]?.[0]).toBe('{"url":"https://shop.example/p?[REDACTED]"}');
    const twice = redact(JSON.stringify(JSON.stringify(value)));
    expect(JSON.parse(JSON.parse(twice) as string)).toEqual(parsed);
  });
});
