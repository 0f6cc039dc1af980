import { readFile } from "node:fs/promises";
import { userInfo } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { log } from "../../src/log.js";
import { type Harness, startHarness } from "../helpers/tool-harness.js";

/**
 * The audit trail of a server on an in-process transport (as on stdio): every tool call is
 * recorded with the local user as caller, how it ended, and arguments without secrets.
 */
const JWT =
  "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJtYWxsb3J5IiwiYXVkIjoieCJ9.U2lnbmF0dXJlT2ZUaGVUb2tlbjAxMjM0NQ";

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h?.close();
});

describe("the audit trail of tool calls", () => {
  it("records each call with the local user, outcome, kind and masked arguments", async () => {
    const local = `local:${userInfo().username}`;
    const ok = await h.call("campaign_metrics", { task_from: "2026-11-01", task_to: "2026-11-20" });
    expect(ok.isError).toBeFalsy();
    const refused = await h.call("start_export", { type: "no_such_type" });
    expect(refused.isError).toBe(true);
    // A secret-looking argument: the service's own key and an access token, pasted into SQL.
    await h.call("query_export", {
      sql: `SELECT '${h.sandbox.secret_key}' AS k, '${JWT}' AS t`,
      files: [],
    });

    const records = await h.runtime.audit.list();
    expect(records.map((r) => [r.caller, r.tool, r.outcome, r.error])).toEqual([
      [local, "campaign_metrics", "ok", undefined],
      [local, "start_export", "error", "ToolInputError"],
      [local, "query_export", expect.any(String), expect.anything()],
    ]);
    expect(records[0]?.arguments).toEqual({ task_from: "2026-11-01", task_to: "2026-11-20" });
    for (const r of records) {
      expect(Date.parse(r.at)).not.toBeNaN();
      expect(r.duration_ms).toBeGreaterThanOrEqual(0);
    }
    expect(records[2]?.arguments).toEqual({
      sql: "SELECT '[REDACTED]' AS k, '[REDACTED]' AS t",
      files: [],
    });
    // The file itself: neither the key, nor the token, nor a recognizable part of either.
    const trail = await readFile(join(h.dataDir, "audit", "calls.jsonl"), "utf8");
    expect(trail.trim().split("\n")).toHaveLength(3);
    expect(trail).not.toContain(h.sandbox.secret_key);
    expect(trail).not.toContain(h.sandbox.secret_key.slice(0, 12));
    for (const part of JWT.split(".")) expect(trail).not.toContain(part);
  });

  it("never lets a trail that fails fail the call: the failure is logged without its message", async () => {
    const warn = vi.spyOn(log, "warn").mockImplementation(() => undefined);
    // A trail that breaks in every way it can: at once, and later.
    const record = vi
      .spyOn(h.runtime.audit, "record")
      .mockImplementationOnce(() => {
        throw new TypeError(`out.replace is not a function ${h.sandbox.secret_key}`);
      })
      .mockImplementationOnce(() => Promise.reject(new Error("disk full")));
    try {
      for (let i = 0; i < 2; i++) {
        const result = await h.call("campaign_metrics", {
          task_from: "2026-11-01",
          task_to: "2026-11-20",
        });
        expect(result.isError).toBeFalsy();
      }
      expect(record).toHaveBeenCalledTimes(2);
      expect(warn.mock.calls.filter(([message]) => message === "audit trail not written")).toEqual([
        ["audit trail not written", { tool: "campaign_metrics", error: "TypeError" }],
        ["audit trail not written", { tool: "campaign_metrics", error: "Error" }],
      ]);
    } finally {
      record.mockRestore();
      warn.mockRestore();
    }
  });
});
