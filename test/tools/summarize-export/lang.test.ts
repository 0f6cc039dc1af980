import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, startHarness } from "../../helpers/tool-harness.js";
import { writeCampaignCsv, writeScenarioXlsx } from "../../report/fixtures.js";
import { dataWords, englishWords } from "../../report/visible-text.js";

/**
 * summarize_export's `lang` through the SDK client: the text in the language asked for, by
 * default Korean where the application is in Asia/Seoul and English elsewhere; the structured
 * result the same in either.
 */

/** Code names and units the Korean text may hold as they are. */
const CODE_NAMES = [
  "campaign_metrics",
  "start_export",
  "summarize_export",
  "task_from",
  "task_to",
  "error_code",
  "conversion_event_type",
  "conversion-event-type",
  "task_id",
  "scheduled_at",
  "by_currency",
  "send_group_by_currency",
  "control_by_currency",
  "detail",
  "true",
  "report",
  "HTML",
  "KRW",
  "ROAS",
  "JSON",
  "ID",
  "p",
  "z",
  "A",
  "B",
];

let seoul: Harness;
let berlin: Harness;
let csv: string;
let xlsx: string;
beforeAll(async () => {
  seoul = await startHarness();
  berlin = await startHarness({ env: { CRM_TIME_ZONE: "Europe/Berlin" } });
  csv = await writeCampaignCsv(seoul.dataDir);
  xlsx = await writeScenarioXlsx(seoul.dataDir);
});
afterAll(async () => {
  await seoul?.close();
  await berlin?.close();
});

/**
 * The summary's own text: campaign_metrics' comparison is written by the export code in English
 * (its sentences are in `vs_campaign_metrics` too), so it is left out of the language check.
 */
const ownText = (text: string) => text.replace(/\n\*\*Against campaign_metrics\*\*: .*$/m, "");

describe("summarize_export lang", () => {
  it("lang ko: the campaign summary and its closing line are Korean", async () => {
    const r = await seoul.call("summarize_export", { file: csv, lang: "ko" });
    expect(r.isError, r.text).toBeFalsy();
    expect(r.text).toMatch(/^\*\*캠페인 내보내기\*\* \(행 785개, 발송 회차 2회/);
    expect(r.text).toContain("차이는 유의하지 않음 (95% 신뢰수준), p = 0.874.");
    expect(r.text).toContain("_생략한 것이 없습니다. 모든 수치는 구조화된 결과에 있습니다._");
    expect(r.text).toContain('차트: 같은 호출에 "report": true를 더하면 HTML 파일로 씁니다.');
    expect(englishWords(ownText(r.text), [...CODE_NAMES, ...dataWords(r.structured)])).toEqual([]);
  });

  it("by default Korean in Asia/Seoul, English elsewhere; lang en is English", async () => {
    const byDefault = await seoul.call("summarize_export", { file: csv });
    const korean = await seoul.call("summarize_export", { file: csv, lang: "ko" });
    const english = await seoul.call("summarize_export", { file: csv, lang: "en" });
    expect(byDefault.text).toBe(korean.text);
    expect(english.text).toMatch(/^\*\*Campaign export\*\* \(785 rows, 2 send rounds/);
    expect(english.text).toContain(
      'Charts: the same call with "report": true writes them as an HTML file.',
    );
    const elsewhere = await berlin.call("summarize_export", {
      file: await writeCampaignCsv(berlin.dataDir),
    });
    expect(elsewhere.text).toMatch(/^\*\*Campaign export\*\* \(785 rows, 2 send rounds/);
    // The structured result is for code: the same in either language.
    expect(korean.structured).toEqual(english.structured);
  });

  it("a scenario summary in Korean", async () => {
    const scenario = await seoul.call("summarize_export", { file: xlsx, lang: "ko" });
    expect(scenario.text).toMatch(/^\*\*시나리오 내보내기\*\*: 메시지 노드 4개\./);
    expect(englishWords(scenario.text, [...CODE_NAMES, ...dataWords(scenario.structured)])).toEqual(
      [],
    );
  });
});
