import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, it } from "vitest";
import { childRunEnv } from "../setup/temp-folder.js";

// `npm run demo` is the README's first impression: it must show both export kinds summarized and
// fail loudly when a step it expects does not happen. It runs the built server (npm test builds).
const DEMO = new URL("../../scripts/demo.mjs", import.meta.url).pathname;
const BIN = new URL("../../dist/cli.js", import.meta.url).pathname;

function runDemo(env: Record<string, string> = {}): Promise<{ code: number | null; out: string }> {
  if (!existsSync(BIN)) throw new Error("dist/cli.js missing: run npm run build (npm test does)");
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [DEMO], {
      env: { PATH: process.env.PATH, ...childRunEnv(), ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out }));
  });
}

// The two runs are separate processes with their own data folders: run side by side, the file
// takes as long as the longer run instead of both.
describe.concurrent("npm run demo", () => {
  it("follows every export campaign_metrics' next_calls give and summarizes both export kinds", async ({
    expect,
  }) => {
    const { code, out } = await runDemo();
    expect(out).not.toContain("DEMO FAILED");
    expect(code).toBe(0);
    const steps = out.slice(out.lastIndexOf("Steps done"));
    expect(steps).toContain("campaign_metrics gave start_export calls in next_calls");
    expect(steps).toMatch(/summarize_export summarized the campaign_event_data export/);
    expect(steps).toMatch(/summarize_export summarized the scenario_daily_metrics export/);
    expect(steps).toContain("query_export answered a question in SQL over the campaign exports");
    expect(steps).toContain("check_export listed every job made");
    expect(steps).toContain("query_export described a history of two campaigns or more");
    expect(steps).toContain("query_export answered a question across campaigns over the history");
    // Every start_export the metrics proposed was made (the split case gives several).
    const proposed = (out.match(/Export the raw events of/g) ?? []).length;
    const exported = (steps.match(/campaign export \{.* downloaded its file/g) ?? []).length;
    expect(proposed).toBeGreaterThan(0);
    expect(exported).toBe(proposed);
  }, 240_000);

  it("exits 1 and names the step when a step it expects does not happen", async ({ expect }) => {
    // A 0.1 MB download cap refuses the campaign file (about 0.6 MB): the export step fails.
    const { code, out } = await runDemo({ CRM_MAX_DOWNLOAD_MB: "0.1" });
    expect(code).toBe(1);
    expect(out).toMatch(
      /DEMO FAILED: expected step did not happen: campaign export .* downloaded its file/,
    );
    expect(out).not.toContain("Steps done");
  }, 120_000);
});
