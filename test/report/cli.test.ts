import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeScenarioXlsx } from "./fixtures.js";

/** `crm-insights-mcp report` (the built bin): what it writes and how it refuses bad input. */

const BIN = join(import.meta.dirname, "../../dist/cli.js");
let dir: string;

function run(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, "report", ...args],
      { env: { ...process.env, ...env } },
      (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr });
      },
    );
  });
}

/** The language the page is written in: its root element's `lang`. */
async function pageLang(path: string): Promise<string | undefined> {
  return /<html lang="([^"]*)">/.exec(await readFile(path, "utf8"))?.[1];
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

  describe("writes the page in the language asked for, by default Korean in Asia/Seoul", () => {
    let xlsx: string;
    beforeAll(async () => {
      xlsx = await writeScenarioXlsx(dir);
    });

    // A test per case, each one run of the bin: each has its own deadline on a busy machine.
    const cases = [
      { args: ["--lang", "en"], zone: "Asia/Seoul", lang: "en" },
      { args: ["--lang", "ko"], zone: "Europe/Berlin", lang: "ko" },
      { args: [], zone: "Asia/Seoul", lang: "ko" },
      // Asia/Seoul is the application's zone when none is set.
      { args: [], zone: "", lang: "ko" },
      { args: [], zone: "America/New_York", lang: "en" },
    ];
    for (const [i, c] of cases.entries()) {
      const given = c.args.length === 0 ? "no --lang" : c.args.join(" ");
      it(`${given}, CRM_TIME_ZONE=${JSON.stringify(c.zone)}: ${c.lang}`, async () => {
        const out = join(dir, `lang-${i}.html`);
        const r = await run([xlsx, "--out", out, ...c.args], { CRM_TIME_ZONE: c.zone });
        expect(r.code, r.stderr).toBe(0);
        expect(await pageLang(out)).toBe(c.lang);
      });
    }

    it("refuses another language, and both usages say which it takes", async () => {
      const fr = join(dir, "fr.html");
      const wrong = await run([xlsx, "--out", fr, "--lang", "fr"]);
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain('--lang takes ko or en (got "fr").');
      await expect(readFile(fr)).rejects.toThrow(/ENOENT/);
      const help = await run(["--help"]);
      expect(help.stdout).toContain("--lang ko|en");
      expect(help.stdout).toContain("Korean when CRM_TIME_ZONE is Asia/Seoul");
      // The bin's own --help says the same, and which commands take --lang.
      const usage = await new Promise<string>((resolve) => {
        execFile(process.execPath, [BIN, "--help"], (_error, stdout) => resolve(stdout));
      });
      expect(usage).toContain("crm-insights-mcp report FILE --out PATH.html [--lang ko|en]");
      expect(usage.replace(/\s+/g, " ")).toContain(
        "by default Korean when CRM_TIME_ZONE is Asia/Seoul (its default), else English",
      );
      expect(usage).toContain("crm-insights-mcp summarize FILE [--json] [--detail] [--lang ko|en]");
      expect(usage).toContain("crm-insights-mcp doctor [--json] [--lang ko|en]");
    });
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
