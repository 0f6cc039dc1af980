import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeScenarioXlsx } from "./fixtures.js";

/** `crm-insights-mcp report` (the built bin): what it writes and how it refuses bad input. */

const BIN = join(import.meta.dirname, "../../dist/cli.js");
let dir: string;

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, "report", ...args], (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr });
    });
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "report-cli-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("crm-insights-mcp report", () => {
  it("writes the page with the summary written in", async () => {
    const xlsx = await writeScenarioXlsx(dir);
    const out = join(dir, "시나리오 보고서.html");
    const r = await run([xlsx, "--out", out]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Wrote .*시나리오 보고서\.html \(\d+\.\d KB\): 4 message node\(s\)/);
    const html = await readFile(out, "utf8");
    const data = html.slice(html.indexOf('id="report-data">') + 17);
    const summary = JSON.parse(data.slice(0, data.indexOf("</script>"))) as { kind: string };
    expect(summary.kind).toBe("scenario_daily_metrics");
  });

  it("refuses missing or wrong arguments with the usage", async () => {
    const noOut = await run([join(dir, "x.csv")]);
    expect(noOut.code).toBe(2);
    expect(noOut.stderr).toContain("Give the output file with --out PATH.html.");
    const notHtml = await run([join(dir, "x.csv"), "--out", join(dir, "x.pdf")]);
    expect(notHtml.code).toBe(2);
    expect(notHtml.stderr).toContain("should end in .html");
    const unknown = await run(["--pdf"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("Unknown option --pdf.");
  });

  it("a missing export file is named, and nothing is written", async () => {
    const out = join(dir, "none.html");
    const r = await run([join(dir, "missing.csv"), "--out", out]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("File not found");
    await expect(readFile(out)).rejects.toThrow(/ENOENT/);
  });
});
