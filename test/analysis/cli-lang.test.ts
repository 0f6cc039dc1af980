import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { summaryEn } from "../../src/analysis/i18n/summary-en.js";
import { summaryKo } from "../../src/analysis/i18n/summary-ko.js";
import { summarizeFile } from "../../src/analysis/index.js";
import { renderSummaryMarkdown } from "../../src/analysis/render.js";
import { writeCampaignCsv, writeManyRoundsCsv, writeScenarioXlsx } from "../report/fixtures.js";
import { dataWords, englishWords } from "../report/visible-text.js";

/**
 * `crm-insights-mcp summarize --lang ko` (the built bin, dist/cli.js): the text in Korean from its
 * catalogue, English without the option (also in Asia/Seoul), and the JSON the same in either.
 */

const BIN = join(import.meta.dirname, "../../dist/cli.js");

/** Names of code, fields and units the Korean text may hold as they are. */
const CODE_NAMES = [
  "campaign_metrics",
  "error_code",
  "task_id",
  "scheduled_at",
  "json",
  "detail",
  "conversion-event-type",
  "conversion_event_type",
  "landing_clicked",
  "by_currency",
  "send_group_by_currency",
  "control_by_currency",
  "KRW",
  "ROAS",
  "JSON",
  "ID",
  "p",
  "z",
  "A",
  "B",
];

function summarize(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [BIN, "summarize", ...args],
      { env: { ...process.env, ...env }, timeout: 20_000 },
      (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr });
      },
    );
  });
}

let dir: string;
let files: Record<"campaign" | "scenario" | "many" | "cut", string>;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "summarize-lang-"));
  const campaign = await writeCampaignCsv(dir);
  const cut = join(dir, "cut.csv");
  await writeFile(cut, (await readFile(campaign, "utf8")).replace(/\r?\n$/, ""));
  files = {
    campaign,
    scenario: await writeScenarioXlsx(dir),
    many: await writeManyRoundsCsv(dir),
    cut,
  };
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

type Tree = { [key: string]: unknown };
function shape(tree: Tree, prefix = ""): string[] {
  return Object.entries(tree)
    .flatMap(([key, value]) =>
      typeof value === "object" && value !== null && !Array.isArray(value)
        ? shape(value as Tree, `${prefix}${key}.`)
        : [`${prefix}${key}: ${Array.isArray(value) ? `list of ${value.length}` : typeof value}`],
    )
    .sort();
}

describe("the summary's catalogues", () => {
  it("Korean and English have the same keys, and columns of the same count", () => {
    expect(shape(summaryKo)).toEqual(shape(summaryEn));
  });

  it("the Korean text of real files has no English word but the file's values and code names", async () => {
    const cases = [
      [files.campaign, {}],
      [files.campaign, { conversionEventType: "purchase" }],
      [files.campaign, { conversionEventType: "nothing-like-it" }],
      [files.scenario, {}],
      [files.many, {}],
      [files.cut, {}],
    ] as const;
    for (const [file, options] of cases) {
      const s = await summarizeFile(file, options);
      for (const detail of [false, true]) {
        const text = renderSummaryMarkdown(s, { lang: "ko", reader: "command", detail });
        // The file's values, and the conversion type asked for (named back in the text).
        const allowed = [...CODE_NAMES, ...dataWords(s), ...Object.values(options)];
        expect(englishWords(text, allowed), `${file} ${JSON.stringify(options)}`).toEqual([]);
      }
    }
    // The check sees English: the same file's English text is full of it.
    const s = await summarizeFile(files.campaign);
    expect(englishWords(renderSummaryMarkdown(s), [...CODE_NAMES, ...dataWords(s)])).toContain(
      "Engagement",
    );
  });
});

describe("crm-insights-mcp summarize --lang", () => {
  it("--lang ko prints the summary in Korean; without it, English even in Asia/Seoul", async () => {
    const korean = await summarize([files.campaign, "--lang", "ko"]);
    expect(korean.code, korean.stderr).toBe(0);
    expect(korean.stdout).toMatch(/^\*\*캠페인 내보내기\*\* \(행 785개, 발송 회차 2회/);
    expect(korean.stdout).toContain("차이는 유의하지 않음 (95% 신뢰수준), p = 0.874.");
    expect(korean.stdout).toContain("_생략한 것이 없습니다. 모든 수치는 --json 출력에 있습니다._");
    const english = await summarize([files.campaign], { CRM_TIME_ZONE: "Asia/Seoul" });
    expect(english.stdout).toMatch(/^\*\*Campaign export\*\* \(785 rows, 2 send rounds/);
    expect((await summarize([files.campaign, "--lang", "en"])).stdout).toBe(english.stdout);
    const scenario = await summarize([files.scenario, "--lang", "ko"]);
    expect(scenario.stdout).toMatch(/^\*\*시나리오 내보내기\*\*: 메시지 노드 4개\./);
  });

  it("--json prints the same JSON whatever the language", async () => {
    for (const file of [files.campaign, files.scenario]) {
      const plain = await summarize([file, "--json"]);
      const korean = await summarize([file, "--json", "--lang", "ko"]);
      const english = await summarize([file, "--lang", "en", "--json"]);
      expect(plain.code).toBe(0);
      expect(korean.stdout).toBe(plain.stdout);
      expect(english.stdout).toBe(plain.stdout);
      expect(JSON.parse(korean.stdout)).toHaveProperty("kind");
    }
  });

  it("exit 2: --lang other than ko or en, with the usage", async () => {
    const run = await summarize([files.campaign, "--lang", "fr"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--lang takes ko or en (got "fr").');
    expect(run.stderr).toContain("[--lang ko|en]");
    expect((await summarize([files.campaign, "--lang"])).code).toBe(2);
  });
});
