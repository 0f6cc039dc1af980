import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { campaignRows, toCsv } from "../analysis/campaign/fixture.js";
import { must } from "../helpers/must.js";
import { type Run, runQueryBin } from "../helpers/run-query-bin.js";

/** `crm-insights-mcp query ... --report PATH.html` (the built bin, dist/cli.js). */

const BIN = join(import.meta.dirname, "../../dist/cli.js");
const GROUP_BY = "SELECT event_role, count(*) AS n FROM events GROUP BY 1 ORDER BY 2 DESC";

function query(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return runQueryBin(BIN, args, env, 60_000);
}

/** The data written into a page, and the language it is drawn in. */
async function pageData(path: string): Promise<{ lang: string; data: Record<string, unknown> }> {
  const html = await readFile(path, "utf8");
  const start = html.indexOf('id="report-data">') + 'id="report-data">'.length;
  const data = JSON.parse(html.slice(start, html.indexOf("</script>", start))) as Record<
    string,
    unknown
  >;
  return { lang: must(/<html lang="([^"]*)">/.exec(html)?.[1], "lang of the page"), data };
}

let dir: string;
let csv: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "query-report-"));
  csv = join(dir, "campaign.csv");
  await writeFile(csv, toCsv(campaignRows(7, 80)));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("crm-insights-mcp query --report", () => {
  it("writes the answer as a page with its chart, its rows and its SQL", async () => {
    const out = join(dir, "역할별.html");
    const run = await query(["--sql", GROUP_BY, csv, "--report", out, "--lang", "en"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("|event_role|n|");
    expect(run.stdout).toMatch(
      /Wrote .*역할별\.html \(\d+\.\d KB\)\. Chart: bar chart of n by event_role \(a category with numbers: a bar per numeric column\)\.\n$/,
    );
    const { lang, data } = await pageData(out);
    expect(lang).toBe("en");
    expect(data.columns).toEqual([
      { name: "event_role", type: "VARCHAR" },
      { name: "n", type: "BIGINT" },
    ]);
    expect(data.chart).toMatchObject({ type: "bar", x: "event_role", y: ["n"], series: null });
    expect(data.sql).toBe(GROUP_BY);
    expect((data.rows as unknown[]).length).toBe(data.row_count);
  });

  it("keeps stdout the JSON answer alone with --json; the page line goes to stderr", async () => {
    const out = join(dir, "json.html");
    const run = await query(["--json", "--sql", GROUP_BY, "--report", out, csv]);
    expect(run.code, run.stderr).toBe(0);
    const answer = JSON.parse(run.stdout) as { columns: unknown[] };
    expect(answer.columns).toHaveLength(2);
    expect(run.stderr).toContain(`Wrote ${out}`);
  });

  it("writes Korean by default in Asia/Seoul, as the report command does", async () => {
    const out = join(dir, "ko.html");
    const run = await query(["--sql", GROUP_BY, "--report", out, csv], {
      CRM_TIME_ZONE: "Asia/Seoul",
    });
    expect(run.code, run.stderr).toBe(0);
    expect((await pageData(out)).lang).toBe("ko");
  });

  it("a page it cannot write is said on stderr with exit 1, after the answer", async () => {
    const out = join(dir, "no-such-folder", "page.html");
    const run = await query(["--sql", GROUP_BY, csv, "--report", out]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("|event_role|n|");
    expect(run.stderr).toBe(
      `crm-insights-mcp query: cannot write the page ${out} (ENOENT); give --report a path in a folder that exists and that you may write.\n`,
    );
  });

  it("refuses a page name without .html, a language it does not write, and --lang alone", async () => {
    const cases: Array<[string[], string]> = [
      [["--report", join(dir, "a.txt")], '--report takes a path ending in .html (got "'],
      [["--report", join(dir, "a.html"), "--lang", "fr"], '--lang takes ko or en (got "fr").'],
      [["--lang", "ko"], "--lang is the language of the --report page; give --report PATH.html."],
      [["--report"], "--report needs a value."],
    ];
    for (const [args, message] of cases) {
      const run = await query(["--sql", GROUP_BY, csv, ...args]);
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.stderr).toContain(message);
      expect(run.stderr).toContain("Usage: crm-insights-mcp query");
    }
  });
});
