import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";

// A short seeded fault soak (scripts/soak.mjs) on loopback: the built server through the MCP
// client, the sandbox behind a proxy failing about a fifth of its answers, a kill -9 mid-run,
// then the invariants a user relies on. Bounded: 200 calls, answers held 2-4 s; about 20 s.
const SOAK = new URL("../../scripts/soak.mjs", import.meta.url).pathname;
const BIN = new URL("../../dist/cli.js", import.meta.url).pathname;

interface SoakReport {
  calls: number;
  faults: number;
  kills: number;
  crashes: number;
  restarts: number;
  duplicates: number;
  downloads_identical: number;
  summaries_compared: number;
  recovered_exports: string;
  recovery_blocked_by_budget: string[];
  latency_ms: { max: number; bound: number };
  violations: string[];
}

function runSoak(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  if (!existsSync(BIN)) throw new Error("dist/cli.js missing: run npm run build (npm test does)");
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SOAK, ...args], {
      env: { PATH: process.env.PATH },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out, err }));
  });
}

describe("npm run soak -- --short", () => {
  it("holds every invariant through faults and a kill -9, and recovers once the faults stop", async () => {
    const { code, out, err } = await runSoak([
      "--short",
      "--calls",
      "200",
      "--seed",
      "5",
      "--json",
    ]);
    const report = JSON.parse(out) as SoakReport;
    expect(report.violations, err.slice(-2000)).toEqual([]);
    expect(code).toBe(0);
    expect(report.calls).toBeGreaterThanOrEqual(40);
    // The run did meet what it is about: faults, one kill and a restart, no crash.
    expect(report.faults).toBeGreaterThan(0);
    expect(report.kills).toBe(1);
    expect(report.restarts).toBe(1);
    expect(report.crashes).toBe(0);
    expect(report.duplicates).toBe(0);
    expect(report.latency_ms.max).toBeLessThanOrEqual(report.latency_ms.bound);
    // Every export finished (or was held back only by the documented creation budget), and
    // the files compared byte for byte with the sandbox's.
    const [done, all] = report.recovered_exports.split("/").map(Number);
    expect((done ?? 0) + report.recovery_blocked_by_budget.length).toBe(all);
    expect(report.downloads_identical).toBeGreaterThan(0);
    expect(report.summaries_compared).toBeGreaterThan(0);
  }, 240_000);
});
