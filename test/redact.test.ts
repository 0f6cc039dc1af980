import { describe, expect, it } from "vitest";
import { redact, redactUrl, registerSecret } from "../src/redact.js";

describe("redact", () => {
  it("masks registered secrets wherever they appear", () => {
    registerSecret("sk-live-abcdef123");
    expect(redact("key sk-live-abcdef123 and again sk-live-abcdef123.")).toBe(
      "key [REDACTED] and again [REDACTED].",
    );
  });

  it("ignores values too short to be keys", () => {
    registerSecret("ab");
    registerSecret(undefined);
    expect(redact("ab cab")).toBe("ab cab");
  });

  it("masks URL query strings and Authorization values", () => {
    expect(redact("GET https://files.example.com/a.csv?X-Amz-Signature=abc&x=1 failed")).toBe(
      "GET https://files.example.com/a.csv?[REDACTED] failed",
    );
    expect(redact('{"Authorization": "unregistered-key-1"}')).toBe(
      '{"Authorization": "[REDACTED]"}',
    );
    expect(redact("authorization: other-key")).toBe("authorization: [REDACTED]");
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
