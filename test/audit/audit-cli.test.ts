import { mkdtemp, rm, writeFile } from "node:fs/promises";
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

  it("shows the caller's kind, and the identity behind an OAuth caller's name", async () => {
    const trail = new FileAuditTrail(join(dataDir, "sandbox"));
    await trail.record({
      at: Date.UTC(2026, 10, 22, 0, 2, 0),
      caller: {
        kind: "oauth",
        name: "oauth:alice@example.com",
        issuer: "https://login.example.com",
        subject: "00u1abcd",
        clientId: "vscode",
      },
      tool: "check_export",
      args: {},
      outcome: "ok",
      durationMs: 3,
    });
    await trail.close();
    const { out } = await run(["--caller", "oauth:alice@example.com"]);
    expect(out).toContain(
      "2026-11-22T00:02:00.000Z  oauth  oauth:alice@example.com [sub 00u1abcd, client vscode]  check_export  ok",
    );
    expect(out).toContain("1 call(s) from");
  });

  it("never lets a caller's or a tool's control characters reach the terminal raw", async () => {
    const trail = new FileAuditTrail(join(dataDir, "sandbox"));
    // CR and erase-line, then a forged line; a C1 CSI; a right-to-left override; BEL in a title.
    const forged = "mallory\r\x1b[2K2026-11-22T00:00:00.000Z  token  alice  start_export  ok";
    await trail.record({
      at: Date.UTC(2026, 10, 22, 0, 3, 0),
      caller: { kind: "oauth", name: `oauth:${forged}`, subject: "x\u009b2J" },
      tool: "evil\u202e\x1b]0;title\x07",
      args: { note: "line\nbreak\x7f" },
      outcome: "denied",
      error: "insufficient_scope",
      durationMs: 0,
    });
    await trail.close();
    // A line the trail did not write itself (another version, a copied file): raw once parsed.
    const raw = {
      at: "2026-11-22T00:04:00.000Z",
      caller: "eve\r\x1b[1A",
      caller_kind: "token",
      tool: "x\u009b2J",
      arguments: {},
      outcome: "ok",
      duration_ms: 1,
    };
    await writeFile(join(dataDir, "sandbox", "audit", "calls.jsonl"), `${JSON.stringify(raw)}\n`, {
      flag: "a",
    });
    const { code, out } = await run([]);
    expect(code).toBe(0);
    const lines = out.split("\n");
    // Four records, the count, and the end of the last line: no line was added or broken.
    expect(lines).toHaveLength(6);
    for (const line of lines) {
      // biome-ignore lint/suspicious/noControlCharactersInRegex: what must not be there
      expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    }
    expect(out).toContain("oauth:mallory\\r\\x1b[2K2026-11-22T00:00:00.000Z");
    expect(out).toContain("evil\\u202e\\x1b]0;title\\x07");
    expect(out).toContain("[sub x\\x9b2J]");
    expect(out).toContain("token  eve\\r\\x1b[1A  x\\x9b2J  ok");
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
