import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { must } from "../helpers/must.js";
import { type Harness, startHarness } from "../helpers/tool-harness.js";
import { writeCampaignCsv } from "./fixtures.js";

// Reads the built page, `dist/report/view.html`, so it runs after the build (vitest.config.ts).

/** summarize_export with report: true writes the HTML report and links it as a resource. */

let h: Harness;
let csv: string;

beforeAll(async () => {
  h = await startHarness();
  // In the data folder: the tools read no file outside it.
  csv = await writeCampaignCsv(h.dataDir);
});
afterAll(async () => {
  await h?.close();
});

describe("summarize_export report: true", () => {
  it("writes the report into the data folder and links it as crm-report://", async () => {
    const r = await h.call("summarize_export", { file: csv, report: true });
    expect(r.isError).not.toBe(true);
    const path = r.structured.report_path as string;
    expect(path.startsWith(join(h.dataDir, "reports"))).toBe(true);
    // In Korean, as the summary above it: the application is in Asia/Seoul.
    expect(r.text).toContain(`차트가 담긴 HTML 보고서: ${path}`);
    expect(r.text).not.toContain('"report": true');
    const link = r.content.find((c) => c.type === "resource_link") as
      | { uri: string; mimeType: string; name: string }
      | undefined;
    expect(link?.uri).toMatch(/^crm-report:\/\/campaign-_-[0-9a-f]{8}\.html$/);
    expect(link?.mimeType).toBe("text/html");
    const onDisk = await readFile(path, "utf8");
    const { contents } = await h.client.readResource({ uri: must(link, "link to the report").uri });
    expect((contents[0] as { text: string }).text).toBe(onDisk);
    // The data is in the page: the summary's own numbers, and the file's Korean name.
    const data = onDisk.slice(onDisk.indexOf('id="report-data">') + 17);
    const embedded = JSON.parse(data.slice(0, data.indexOf("</script>"))) as {
      rows: number;
      file: { path: string };
    };
    expect(embedded.rows).toBe(r.structured.rows);
    expect(embedded.file.path).toContain("campaign-캠페인.csv");
    // Asked again, the same file is written over, not a second one.
    const again = await h.call("summarize_export", { file: csv, report: true });
    expect(again.structured.report_path).toBe(path);
    expect((await stat(path)).isFile()).toBe(true);
  });

  it("lang chooses the page's language; by default Korean, the application being in Asia/Seoul", async () => {
    const lang = async (path: string) =>
      /<html lang="([^"]*)">/.exec(await readFile(path, "utf8"))?.[1];
    const byDefault = await h.call("summarize_export", { file: csv, report: true });
    const korean = await h.call("summarize_export", { file: csv, report: true, lang: "ko" });
    const english = await h.call("summarize_export", { file: csv, report: true, lang: "en" });
    expect(h.config.timeZone).toBe("Asia/Seoul");
    expect(await lang(byDefault.structured.report_path as string)).toBe("ko");
    expect(korean.structured.report_path).toBe(byDefault.structured.report_path);
    // Each language its own file: asking for English does not write over the Korean page.
    expect(english.structured.report_path).not.toBe(korean.structured.report_path);
    expect(await lang(english.structured.report_path as string)).toBe("en");
    expect(await lang(korean.structured.report_path as string)).toBe("ko");
    // The tool's data is the same in either language; its text follows lang.
    const { report_path: _en, ...enData } = english.structured;
    const { report_path: _ko, ...koData } = korean.structured;
    expect(enData).toEqual(koData);
    const refused = await h.call("summarize_export", { file: csv, report: true, lang: "fr" });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain("lang");
  });

  it("a crm-report:// name that is not a written report is refused, naming the fix", async () => {
    await expect(h.client.readResource({ uri: "crm-report://nothing-here.html" })).rejects.toThrow(
      /No report named nothing-here.html/,
    );
    await expect(
      h.client.readResource({ uri: "crm-report://..%2Fexport-jobs.json" }),
    ).rejects.toThrow(/not a report name/);
  });
});
