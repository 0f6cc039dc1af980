import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { summarizeFile } from "../../src/analysis/index.js";
import { en } from "../../src/report/i18n/en.js";
import {
  CATALOGUES,
  defaultLang,
  fileValue,
  langOfLocale,
  reportText,
  warningText,
} from "../../src/report/i18n/index.js";
import { ko } from "../../src/report/i18n/ko.js";
import { buildXlsx, METRICS } from "../analysis/scenario/xlsx-fixture.js";
import { writeCampaignCsv } from "./fixtures.js";
import { englishWords } from "./visible-text.js";

/**
 * The two catalogues of the report's words: the same keys, the same kinds of entry, Korean with no
 * English words but code names, and the analysis' own English warnings read back into either.
 */

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "report-i18n-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

type Tree = { [key: string]: unknown };

/** Every leaf as "path: kind" (string or function), in key order. */
function shape(tree: Tree, prefix = ""): string[] {
  return Object.entries(tree)
    .flatMap(([key, value]) =>
      typeof value === "object" && value !== null
        ? shape(value as Tree, `${prefix}${key}.`)
        : [`${prefix}${key}: ${typeof value}`],
    )
    .sort();
}

/** Every leaf written out: strings as they are, functions called with sample arguments. */
function written(tree: Tree, prefix = ""): Array<[string, string]> {
  return Object.entries(tree).flatMap(([key, value]): Array<[string, string]> => {
    const path = `${prefix}${key}`;
    if (typeof value === "string") return [[path, value]];
    if (typeof value === "function") {
      // One value that serves as a name, a Count ({n, text}), a list and a flag.
      const sample = (n: number) => Object.assign(["그룹A", "그룹B"], { n, text: String(n) });
      return [0, 1, 2].map((n) => {
        const args = Array.from({ length: Math.max(1, value.length) }, () => sample(n));
        return [`${path}(${n})`, String((value as (...a: unknown[]) => unknown)(...args))];
      });
    }
    return written(value as Tree, `${path}.`);
  });
}

/** Names of code and units a Korean sentence may hold: commands, tool fields, units. */
const CODE_NAMES = [
  "crm-insights-mcp",
  "summarize",
  "json",
  "report",
  "FILE",
  "out",
  "PATH",
  "html",
  "MCP",
  "Apps",
  "JSON",
  "structuredContent",
  "summarize_export",
  "campaign_metrics",
  "include_tasks",
  "true",
  "top_n",
  "ID",
  "_id",
  "p",
  "z",
  "A",
  "B",
];

describe("the report's catalogues", () => {
  it("Korean and English have the same keys, each a string or a function in both", () => {
    expect(shape(ko)).toEqual(shape(en));
    expect(Object.keys(CATALOGUES).sort()).toEqual(["en", "ko"]);
    // The check would see a missing key: drop one and the shapes differ.
    const { page: _page, ...short } = ko;
    expect(shape(short)).not.toEqual(shape(en));
  });

  it("every Korean entry is written in Korean: no English word but code names", () => {
    const leaks = written(ko)
      .map(([path, text]) => [path, englishWords(text, CODE_NAMES)] as const)
      .filter(([, words]) => words.length > 0);
    expect(leaks).toEqual([]);
    // ... and the check sees English where there is some.
    expect(englishWords(en.campaign.funnel, CODE_NAMES)).toEqual(["Delivery", "funnel"]);
  });

  it("the statistical words say what the test says", () => {
    expect(ko.readout.notSignificant).toBe("유의하지 않음 (95% 신뢰수준)");
    expect(ko.readout.significant).toBe("유의함 (95% 신뢰수준)");
    expect(ko.campaign.controlDiff("대조군")).toBe("사용자당 전환율: 발송 그룹 − 대조군");
    expect([ko.campaign.sent, ko.campaign.received, ko.campaign.opens]).toEqual([
      "발송",
      "수신",
      "오픈",
    ]);
    expect(ko.campaign.conversions).toBe("전환");
  });
});

describe("choosing the language", () => {
  it("a host's locale: Korean for every ko tag, English for any other or none", () => {
    for (const tag of ["ko", "ko-KR", "KO-kr", "ko-Kore-KR", "ko_KR"]) {
      expect(langOfLocale(tag), tag).toBe("ko");
    }
    for (const tag of ["en-US", "de-DE", "kok-IN", "", undefined]) {
      expect(langOfLocale(tag), String(tag)).toBe("en");
    }
  });

  it("a file's default: Korean in Asia/Seoul, English in any other zone", () => {
    expect(defaultLang("Asia/Seoul")).toBe("ko");
    expect(defaultLang("Europe/Berlin")).toBe("en");
    expect(defaultLang("UTC")).toBe("en");
  });

  it("figures follow the locale: KRW without decimals, Korean dates as 2025. 3. 1.", () => {
    const k = reportText("ko");
    const e = reportText("en");
    expect(k.f.money({ KRW: 1_200_000 })).toBe("₩1,200,000");
    expect(k.f.money({ KRW: 1_200_000, USD: 30 })).toBe("₩1,200,000 + US$30.00");
    expect(e.f.money({ KRW: 1_200_000.4 })).toBe("₩1,200,000");
    expect(k.f.localTime("2025-03-01")).toBe("2025. 3. 1.");
    expect(k.f.localTime("2025-03-01 10:00:00")).toBe("2025. 3. 1. 10:00");
    expect(k.f.localTime("2025-03-01 10:00:00", true)).toBe("3. 1. 10:00");
    expect(e.f.localTime("2025-03-01 10:00:00", true)).toBe("3/1, 10:00");
    expect(k.f.instant("2026-11-20T01:00:00Z", "Asia/Seoul", true)).toBe("11. 20. 10:00");
    // A value the file did not give, in the page's words; a currency code Intl does not take.
    expect(fileValue(k, "(none)")).toBe("(없음)");
    expect(fileValue(k, "(empty)")).toBe("(비어 있음)");
    expect(fileValue(e, "E100")).toBe("E100");
    expect(k.f.money({ "(없음)": 5000 })).toBe("5,000 (없음)");
  });
});

describe("the analysis' warnings in the page's language", () => {
  it("each kind of warning a real file gives is read back and written in Korean", async () => {
    // A campaign CSV without its final line break (as an interrupted download leaves it).
    const csv = await readFile(await writeCampaignCsv(dir), "utf8");
    const cut = join(dir, "cut.csv");
    await writeFile(cut, csv.replace(/\r?\n$/, ""));
    const campaign = await summarizeFile(cut);
    // A workbook with a summary row numbered in words, node #2 without a daily sheet, a daily
    // sheet without #number in its name and a sheet without its 날짜 header.
    const header = ["#", "채널", "A/B 테스트 분기", "메시지 노드 ID", ...METRICS];
    const node = (n: number | string) => [n, "앱푸시", null, `node_${n}`, ...METRICS.map(() => 1)];
    const day = ["2025-03-01", ...METRICS.map(() => 1)];
    const xlsx = join(dir, "odd.xlsx");
    await writeFile(
      xlsx,
      await buildXlsx([
        {
          name: "요약",
          rows: [["시나리오 일별 성과"], [], header, node(1), node(2), node("합계")],
        },
        { name: "#1 앱푸시", rows: [["#1 앱푸시"], ["node_1"], ["날짜", ...METRICS], day] },
        { name: "일별", rows: [["일별"], ["날짜", ...METRICS], day] },
        { name: "메모", rows: [["아무 내용"]] },
      ]),
    );
    const scenario = await summarizeFile(xlsx);
    const warnings = [...campaign.warnings, ...scenario.warnings];
    // One of each kind the catalogue knows.
    expect(warnings).toHaveLength(Object.keys(en.readout.warnings).length);
    for (const w of warnings) {
      // English is the analysis' own text; Korean is a sentence of the Korean catalogue.
      expect(warningText(w, en)).toBe(w);
      const korean = warningText(w, ko);
      expect(korean, w).not.toBe(w);
      expect(englishWords(korean, CODE_NAMES), korean).toEqual([]);
    }
    expect(warnings.map((w) => warningText(w, ko))).toContain("노드 #2에 일별 시트가 없습니다.");
    expect(warningText("Something new happened.", ko)).toBe("Something new happened.");
  });
});
