import { afterAll, beforeAll, expect, it } from "vitest";
import { type Harness, startHarness } from "../../helpers/tool-harness.js";
import { writeCampaignCsv } from "../../report/fixtures.js";

// Writes the built page, `dist/report/view.html`, so it runs after the build (vitest.config.ts).

let h: Harness;
let csv: string;
beforeAll(async () => {
  h = await startHarness();
  csv = await writeCampaignCsv(h.dataDir);
});
afterAll(async () => {
  await h?.close();
});

it("summarize_export report: true names the written report in the language asked for", async () => {
  const korean = await h.call("summarize_export", { file: csv, report: true, lang: "ko" });
  expect(korean.isError, korean.text).toBeFalsy();
  expect(korean.text).toContain(`차트가 담긴 HTML 보고서: ${korean.structured.report_path}`);
  expect(korean.text).not.toContain("HTML report with charts");
  const english = await h.call("summarize_export", { file: csv, report: true, lang: "en" });
  expect(english.isError, english.text).toBeFalsy();
  expect(english.text).toContain(`HTML report with charts: ${english.structured.report_path}`);
  expect(english.text).toMatch(/^\*\*Campaign export\*\*/);
});
