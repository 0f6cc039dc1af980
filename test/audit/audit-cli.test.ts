import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { runAuditCommand } from "../../src/audit/cli.js";
import { FileAuditTrail } from "../../src/audit/file-trail.js";

/** `crm-insights-mcp audit` over a trail in a data folder (sandbox mode: no service settings). */
let dataDir: string;
const saved = { ...process.env };

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "crm-audit-cli-"));
  for (const name of Object.keys(process.env)) {
    if (name.startsWith("CRM_") && name !== "CRM_LOG_LEVEL") delete process.env[name];
  }
  process.env.CRM_DATA_DIR = dataDir;
  const trail = new FileAuditTrail(join(dataDir, "sandbox"));
  const at = Date.UTC(2026, 10, 22, 0, 0, 0);
  await trail.record({
    at,
    caller: { kind: "token", name: "alice" },
    tool: "start_export",
    args: { type: "x" },
    outcome: "ok",
    durationMs: 12,
  });
  await trail.record({
    at: at + 60_000,
    caller: { kind: "token", name: "bob" },
    tool: "query_export",
    args: { sql: "SELECT 1" },
    outcome: "denied",
    error: "insufficient_scope",
    durationMs: 0,
  });
  await trail.close();
});

afterEach(async () => {
  // Restored in place: a new object for process.env would cut it off from the real environment
  // (os.tmpdir() and later assignments would no longer see each other) for every later test
  // file in this worker.
  for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
  Object.assign(process.env, saved);
  await rm(dataDir, { recursive: true, force: true });
});

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const stdout = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    out += String(chunk);
    return true;
  });
  const stderr = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
    err += String(chunk);
    return true;
  });
  try {
    return { code: await runAuditCommand(args), out, err };
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
  }
}

describe("crm-insights-mcp audit", () => {
  it("prints the trail as one JSON array, filtered by caller and time", async () => {
    const all = await run(["--json"]);
    expect(all.code).toBe(0);
    expect((JSON.parse(all.out) as Array<{ caller: string }>).map((r) => r.caller)).toEqual([
      "alice",
      "bob",
    ]);
    const bob = await run(["--json", "--caller", "bob"]);
    expect(JSON.parse(bob.out)).toEqual([
      {
        at: "2026-11-22T00:01:00.000Z",
        caller: "bob",
        caller_kind: "token",
        tool: "query_export",
        arguments: { sql: "SELECT 1" },
        outcome: "denied",
        error: "insufficient_scope",
        duration_ms: 0,
      },
    ]);
    const later = await run(["--json", "--since", "2026-11-22T09:00:30+09:00"]);
    expect((JSON.parse(later.out) as unknown[]).length).toBe(1);
    const none = await run(["--json", "--since", "2026-11-23"]);
    expect(JSON.parse(none.out)).toEqual([]);
  });

  it("prints one line per call for people", async () => {
    const { code, out } = await run([]);
    expect(code).toBe(0);
    expect(out).toContain(
      '2026-11-22T00:00:00.000Z  token  alice  start_export  ok  12 ms  {"type":"x"}',
    );
    expect(out).toContain("token  bob  query_export  denied (insufficient_scope)  0 ms");
    expect(out).toContain("2 call(s) from");
  });

  it("refuses bad arguments with exit 2 and the usage", async () => {
    for (const args of [
      ["--since", "yesterday"],
      ["--since", "2026-11-22T09:00"],
      ["--caller"],
      ["--limit", "0"],
      ["--what"],
    ]) {
      const { code, err } = await run(args);
      expect(code, args.join(" ")).toBe(2);
      expect(err).toContain("Usage: crm-insights-mcp audit");
    }
  });
});
