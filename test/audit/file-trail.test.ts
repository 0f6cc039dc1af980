import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { AuditCall } from "../../src/audit/audit-record.js";
import { FileAuditTrail } from "../../src/audit/file-trail.js";
import { log } from "../../src/log.js";

let folder: string;

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), "crm-audit-"));
});

afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

const T0 = Date.UTC(2026, 10, 22, 0, 0, 0);

function call(i: number, caller = "alice"): AuditCall {
  return {
    at: T0 + i * 1000,
    caller: { kind: "token", name: caller },
    tool: "check_export",
    args: { job_id: `job-${i}` },
    outcome: "ok",
    durationMs: 5,
  };
}

describe("the audit trail in the data folder", () => {
  it("appends one JSON line per call, owner-only, and lists them oldest first with filters", async () => {
    const trail = new FileAuditTrail(folder);
    await trail.record(call(2, "bob"));
    await trail.record(call(1, "alice"));
    await trail.record(call(3, "alice"));
    await trail.close();
    const path = join(folder, "audit", "calls.jsonl");
    expect((await readFile(path, "utf8")).trim().split("\n")).toHaveLength(3);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const all = await trail.list();
    expect(all.map((r) => [r.caller, r.arguments])).toEqual([
      ["alice", { job_id: "job-1" }],
      ["bob", { job_id: "job-2" }],
      ["alice", { job_id: "job-3" }],
    ]);
    expect((await trail.list({ caller: "alice" })).map((r) => r.at)).toEqual([
      "2026-11-22T00:00:01.000Z",
      "2026-11-22T00:00:03.000Z",
    ]);
    expect((await trail.list({ since: T0 + 2000 })).length).toBe(2);
    expect((await trail.list({ limit: 1 }))[0]?.at).toBe("2026-11-22T00:00:03.000Z");
  });

  it("rotates past its size and keeps only the newest files", async () => {
    const trail = new FileAuditTrail(folder, { maxBytes: 400, keep: 2 });
    for (let i = 0; i < 30; i++) await trail.record(call(i));
    await trail.close();
    const files = await readdir(join(folder, "audit"));
    const rotated = files.filter((f) => f !== "calls.jsonl");
    expect(rotated).toHaveLength(2);
    for (const f of rotated) expect(f).toMatch(/^calls-\d{8}T\d{9}-[0-9a-f]{6}\.jsonl$/);
    let bytes = 0;
    for (const f of files) bytes += (await stat(join(folder, "audit", f))).size;
    // At most keep + 1 files, each closed soon after passing maxBytes.
    expect(bytes).toBeLessThan(3 * 600);
    // What is left is the newest calls, in order, none twice.
    const listed = (await trail.list()).map((r) => (r.arguments as { job_id: string }).job_id);
    expect(listed.at(-1)).toBe("job-29");
    expect(new Set(listed).size).toBe(listed.length);
    expect(listed).toEqual([...listed].sort((a, b) => Number(a.slice(4)) - Number(b.slice(4))));
  });

  it("loses no line when two processes share the folder and rotate", async () => {
    const one = new FileAuditTrail(folder, { maxBytes: 2000, keep: 100 });
    const two = new FileAuditTrail(folder, { maxBytes: 2000, keep: 100 });
    await Promise.all(
      Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? one : two).record(call(i))),
    );
    await Promise.all([one.close(), two.close()]);
    const listed = await one.list();
    expect(listed).toHaveLength(200);
  });

  it("skips a line cut short by a crash, and lists nothing before the first call", async () => {
    const trail = new FileAuditTrail(folder);
    expect(await trail.list()).toEqual([]);
    await trail.record(call(1));
    await writeFile(join(folder, "audit", "calls.jsonl"), '{"at":"2026-11-22T00:0', {
      flag: "a",
    });
    expect(await trail.list()).toHaveLength(1);
  });

  it("never throws when a record cannot be made, and logs the failure without secrets", async () => {
    const warn = vi.spyOn(log, "warn").mockImplementation(() => undefined);
    const token = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlLWhlcmU";
    const args = {
      get sql(): string {
        throw new Error(`cannot read ${token}`);
      },
    };
    try {
      const trail = new FileAuditTrail(folder);
      await expect(trail.record({ ...call(1), args })).resolves.toBeUndefined();
      await trail.record(call(2));
      await trail.close();
      expect((await trail.list()).map((r) => r.at)).toEqual(["2026-11-22T00:00:02.000Z"]);
      expect(warn).toHaveBeenCalledWith("audit trail not written", {
        trail: join(folder, "audit"),
        error: "Error",
        message: "cannot read [REDACTED]",
      });
    } finally {
      warn.mockRestore();
    }
  });

  it("never rejects when it cannot write, and says so in the log", async () => {
    // A file where the folder should be: every append fails.
    await writeFile(join(folder, "audit"), "not a folder");
    const warn = vi.spyOn(log, "warn").mockImplementation(() => undefined);
    try {
      const trail = new FileAuditTrail(folder);
      await expect(trail.record(call(1))).resolves.toBeUndefined();
      await trail.close();
      expect(warn).toHaveBeenCalledWith("audit trail not written", expect.any(Object));
    } finally {
      warn.mockRestore();
    }
  });
});
