import { describe, expect, it } from "vitest";
import {
  AUDIT_LIMITS,
  auditArguments,
  auditRecord,
  MASK,
  scrubText,
} from "../../src/audit/audit-arguments.js";
import { registerSecret } from "../../src/redact.js";

const JWT =
  "eyJhbGciOiJSUzI1NiIsImtpZCI6ImtleS0xIn0.eyJzdWIiOiJhbGljZSIsInNjb3BlIjoiY3JtLnJlYWQifQ.c2lnbmF0dXJlLWJ5dGVzLWhlcmUtMDEyMzQ1Njc4OQ";

describe("what the audit trail keeps of arguments", () => {
  it("masks registered keys, JWTs (signed or not), Bearer values and known key formats", () => {
    // Distinctive: redaction is process-wide, and other tests' text must not contain its parts.
    registerSecret("sk_crm_audit_Qw7Zr4Kp9Lm2Xv8N");
    // A key registered elsewhere in the process whose parts occur inside a token below (test
    // files share a worker): masking it must not leave the rest of that token readable.
    registerSecret("3456789abcdefABCDEF0");
    const cases = [
      "use sk_crm_audit_Qw7Zr4Kp9Lm2Xv8N please",
      `token ${JWT} here`,
      "eyJhbGciOiJub25lIn0.eyJzdWIiOiJtYWxsb3J5In0.",
      "Authorization: Bearer abcdefgh12345678",
      "sk-proj-AbCdEfGhIjKlMnOpQrStUv123456",
      "ghp_0123456789abcdefABCDEF0123456789abcd",
      "AKIAABCDEFGHIJKLMNOP",
      "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n-----END PRIVATE KEY-----",
    ];
    for (const text of cases) {
      const out = scrubText(text);
      expect(out, text).toContain(MASK);
      expect(out).not.toMatch(/Qw7Zr4Kp|eyJzdWIi|abcdefgh12345678|AbCdEfGh|ghp_0|AKIAABCD|MIIEvQ/);
    }
  });

  it("masks long random-looking runs but keeps IDs, UUIDs, dates and file names readable", () => {
    expect(scrubText("x Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MEFCQ0RFRkdI y")).toBe(`x ${MASK} y`);
    expect(scrubText(`${"a".repeat(8)}0123456789abcdef0123456789abcdef01234567`)).toBe(MASK);
    for (const kept of [
      "65a1b2c3d4e5f6a7b8c9d0e1",
      "7d444840-9dc0-11d1-b245-5ffdce74fad2",
      "2026-11-22T09:00:00+09:00",
      "campaign_event_data_65a1b2c3d4e5f6a7b8c9d0e1_2026-11-01_2026-11-20.csv",
      "SELECT event_role, count(*) FROM events GROUP BY 1",
    ]) {
      expect(scrubText(kept)).toBe(kept);
    }
  });

  it("drops values under secret-like names, at any depth", () => {
    expect(
      auditArguments({
        slot_key: "home_main",
        api_key: "short",
        nested: { password: 123, list: [{ access_token: "x" }] },
      }),
    ).toEqual({
      slot_key: "home_main",
      api_key: MASK,
      nested: { password: MASK, list: [{ access_token: MASK }] },
    });
  });

  it("bounds strings, arrays, objects, depth and the whole", () => {
    const long = "x".repeat(AUDIT_LIMITS.maxString + 10);
    expect(auditArguments({ sql: long })).toEqual({
      sql: `${"x".repeat(AUDIT_LIMITS.maxString)}…[+10 chars]`,
    });
    const ids = Array.from({ length: AUDIT_LIMITS.maxItems + 3 }, (_, i) => `id${i}`);
    const kept = auditArguments({ item_ids: ids }) as { item_ids: string[] };
    expect(kept.item_ids).toHaveLength(AUDIT_LIMITS.maxItems + 1);
    expect(kept.item_ids.at(-1)).toBe("[+3 more]");
    let deep: unknown = "bottom";
    for (let i = 0; i < 10; i++) deep = { d: deep };
    expect(JSON.stringify(auditArguments(deep))).toContain("[nested too deep]");
    const wide = Object.fromEntries(
      Array.from({ length: AUDIT_LIMITS.maxKeys }, (_, i) => [`k${i}`, "v".repeat(1000)]),
    );
    const whole = auditArguments(wide) as { "[truncated]": string; bytes: number };
    expect(whole.bytes).toBeGreaterThan(AUDIT_LIMITS.maxBytes);
    expect(Buffer.byteLength(JSON.stringify(whole))).toBeLessThan(AUDIT_LIMITS.maxBytes);
  });

  it("records the caller, tool, outcome and kind, with the time in ISO 8601 UTC", () => {
    expect(
      auditRecord({
        at: Date.UTC(2026, 10, 22, 0, 0, 0, 5),
        caller: { kind: "token", name: "alice" },
        tool: "start_export",
        args: { type: "campaign_event_data", note: `with ${JWT}` },
        outcome: "error",
        error: "ExportBudgetError",
        durationMs: 12.6,
      }),
    ).toEqual({
      at: "2026-11-22T00:00:00.005Z",
      caller: "alice",
      caller_kind: "token",
      tool: "start_export",
      arguments: { type: "campaign_event_data", note: `with ${MASK}` },
      outcome: "error",
      error: "ExportBudgetError",
      duration_ms: 13,
    });
  });
});
