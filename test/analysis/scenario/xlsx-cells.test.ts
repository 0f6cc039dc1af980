import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ExcelJS from "exceljs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  readWorkbookRows,
  WorkbookFormatError,
} from "../../../src/analysis/scenario/xlsx-cells.js";
import { readCheckedZip } from "../../../src/analysis/scenario/zip-guard.js";

// The workbook reader against exceljs as an independent oracle: a workbook exceljs writes (shared
// strings, rich text, dates with number formats, formulas with cached results, booleans, gaps) is
// read by both and must give the same values; plus parts written by hand for what exceljs does
// not write (namespace prefixes, cells without references, absolute relationship targets).

const LIMITS = {
  maxRows: 100,
  maxColumns: 20,
  tooBig: (sheet: string, what: string) => new Error(`${sheet}: ${what}`),
};

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "crm-xlsx-cells-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function parts(path: string): Promise<Map<string, Buffer>> {
  return readCheckedZip(path, (await stat(path)).size);
}

describe("readWorkbookRows", () => {
  it("reads what exceljs writes the way exceljs reads it", async () => {
    const path = join(dir, "oracle.xlsx");
    const book = new ExcelJS.Workbook();
    const first = book.addWorksheet("요약");
    first.addRow(["#", "채널", "발송 수(건)", "날짜"]);
    first.addRow([1, "알림톡", 1234, new Date(Date.UTC(2026, 10, 3))]);
    first.getCell("D2").numFmt = "yyyy-mm-dd";
    first.addRow([2, { richText: [{ text: "친구" }, { font: { bold: true }, text: "톡" }] }, 0.25]);
    first.getCell("C3").numFmt = "0.00%";
    first.getCell("E3").value = { formula: "C2*2", result: 2468 };
    first.getCell("F3").value = true;
    first.getCell("H5").value = "a gap before it";
    const second = book.addWorksheet("#1 알림톡");
    second.addRow(["#1 알림톡 일별 성과 (2026-11-01 ~ 2026-11-07)"]);
    second.addRow(["msg_node_1"]);
    await book.xlsx.writeFile(path);

    const ours = readWorkbookRows(await parts(path), LIMITS);
    const oracle = new ExcelJS.Workbook();
    await oracle.xlsx.readFile(path);
    const theirs = oracle.worksheets.map((sheet) => {
      const rows: Array<{ r: number; cells: unknown[] }> = [];
      sheet.eachRow({ includeEmpty: false }, (row, r) => {
        const cells: unknown[] = [];
        row.eachCell({ includeEmpty: false }, (cell, c) => {
          const v = cell.value;
          // exceljs gives objects for rich text and formulas; ours gives their text and result.
          cells[c - 1] =
            v !== null && typeof v === "object" && !(v instanceof Date)
              ? "richText" in v
                ? v.richText.map((t) => t.text).join("")
                : "result" in v
                  ? v.result
                  : v
              : v;
        });
        for (let i = 0; i < cells.length; i++) if (cells[i] === undefined) cells[i] = null;
        rows.push({ r, cells });
      });
      return { name: sheet.name, rows };
    });
    expect(ours).toEqual(theirs);
    expect(ours[0]?.rows[1]?.cells[3]).toEqual(new Date(Date.UTC(2026, 10, 3)));
    expect(ours[0]?.rows[2]?.cells[1]).toBe("친구톡");
  });

  it("reads prefixed names, cells without references, inline strings, phonetic runs left out", () => {
    const ns = 'xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
    const rel = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
    const book = new Map<string, Buffer>([
      [
        "xl/workbook.xml",
        Buffer.from(
          `<x:workbook ${ns} ${rel}><x:workbookPr date1904="1"/><x:sheets><x:sheet name="S" sheetId="1" r:id="rId7"/></x:sheets></x:workbook>`,
        ),
      ],
      [
        "xl/_rels/workbook.xml.rels",
        Buffer.from(
          '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId7" Type="t" Target="/xl/worksheets/data.xml"/></Relationships>',
        ),
      ],
      [
        "xl/sharedStrings.xml",
        Buffer.from(
          `<x:sst ${ns}><x:si><x:r><x:t>東京</x:t></x:r><x:rPh><x:t>トウキョウ</x:t></x:rPh></x:si><x:si><x:t xml:space="preserve"> a &amp; b </x:t></x:si></x:sst>`,
        ),
      ],
      [
        "xl/styles.xml",
        Buffer.from(
          `<x:styleSheet ${ns}><x:numFmts><x:numFmt numFmtId="164" formatCode="&quot;day&quot; d/m"/><x:numFmt numFmtId="165" formatCode="[Red]0.0"/></x:numFmts><x:cellXfs><x:xf numFmtId="0"/><x:xf numFmtId="164"/><x:xf numFmtId="165"/><x:xf numFmtId="14"/></x:cellXfs></x:styleSheet>`,
        ),
      ],
      [
        "xl/worksheets/data.xml",
        Buffer.from(
          `<x:worksheet ${ns}><x:sheetData><x:row><x:c t="s"><x:v>0</x:v></x:c><x:c t="s"><x:v>1</x:v></x:c><x:c t="inlineStr"><x:is><x:t>inline</x:t></x:is></x:c></x:row><x:row r="4"><x:c r="B4" s="1"><x:v>0</x:v></x:c><x:c s="2"><x:v>1.5</x:v></x:c><x:c t="e"><x:v>#N/A</x:v></x:c><x:c t="b"><x:v>0</x:v></x:c><x:c t="d"><x:v>2026-11-03T00:00:00Z</x:v></x:c></x:row><x:row r="9"><x:c r="A9"/></x:row></x:sheetData></x:worksheet>`,
        ),
      ],
    ]);
    expect(readWorkbookRows(book, LIMITS)).toEqual([
      {
        name: "S",
        rows: [
          { r: 1, cells: ["東京", " a & b ", "inline"] },
          {
            r: 4,
            // 1904 date system: serial 0 is 1904-01-01; [Red]0.0 is a number, not a date.
            cells: [
              null,
              new Date(Date.UTC(1904, 0, 1)),
              1.5,
              null,
              false,
              new Date(Date.UTC(2026, 10, 3)),
            ],
          },
        ],
      },
    ]);
  });

  it("refuses a sheet past the limits and a part that is not XML", () => {
    const sheet = (cells: string) =>
      new Map<string, Buffer>([
        [
          "xl/workbook.xml",
          Buffer.from('<workbook><sheets><sheet name="S" sheetId="1"/></sheets></workbook>'),
        ],
        [
          "xl/worksheets/sheet1.xml",
          Buffer.from(`<worksheet><sheetData>${cells}</sheetData></worksheet>`),
        ],
      ]);
    expect(() =>
      readWorkbookRows(sheet('<row r="1"><c r="Z1"><v>1</v></c></row>'), LIMITS),
    ).toThrow("S: cells beyond column 20");
    const many = Array.from({ length: 101 }, (_, i) => `<row r="${i + 1}"><c><v>1</v></c></row>`);
    expect(() => readWorkbookRows(sheet(many.join("")), LIMITS)).toThrow("S: more than 100 rows");
    expect(() => readWorkbookRows(sheet("<row><c><v>1</v></row>"), LIMITS)).toThrow(
      WorkbookFormatError,
    );
    expect(() => readWorkbookRows(new Map(), LIMITS)).toThrow(WorkbookFormatError);
  });
});
