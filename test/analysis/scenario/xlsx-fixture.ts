import { deflateRawSync } from "node:zlib";
import JSZip from "jszip";

/**
 * Scenario workbooks written as raw SpreadsheetML and zipped with JSZip (a different writer
 * than the sandbox's exceljs), and hostile zips written byte by byte.
 */

// Written out from spec 2.5/2.4 rather than imported from src/api/schemas.ts: a wrong constant there
// must not agree with itself in the tests.
export const METRICS = [
  "발송 수(건)",
  "발송 수(명)",
  "오픈 수(건)",
  "오픈 수(명)",
  "오픈율(건)",
  "오픈율(명)",
  "전환 수(건)",
  "전환 수(명)",
  "전환율(건)",
  "전환율(명)",
  "전환 수익",
  "집행 비용",
  "ROAS",
  "객단가",
  "CAC",
];

type Cell = string | number | null;

function colName(i: number): string {
  let n = i + 1;
  let s = "";
  while (n > 0) {
    const m = (n - 1) % 26;
    s = String.fromCharCode(65 + m) + s;
    n = Math.floor((n - 1) / 26);
  }
  return s;
}

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

export async function buildXlsx(sheets: { name: string; rows: Cell[][] }[]): Promise<Buffer> {
  const shared: string[] = [];
  const index = new Map<string, number>();
  const sst = (s: string) => {
    let i = index.get(s);
    if (i === undefined) {
      i = shared.length;
      shared.push(s);
      index.set(s, i);
    }
    return i;
  };
  const zip = new JSZip();
  sheets.forEach((sheet, k) => {
    const rowsXml = sheet.rows
      .map((row, r) => {
        const cells = row
          .map((v, c) => {
            const ref = `${colName(c)}${r + 1}`;
            if (v === null) return "";
            if (typeof v === "number") return `<c r="${ref}"><v>${v}</v></c>`;
            return `<c r="${ref}" t="s"><v>${sst(v)}</v></c>`;
          })
          .join("");
        return `<row r="${r + 1}">${cells}</row>`;
      })
      .join("");
    zip.file(
      `xl/worksheets/sheet${k + 1}.xml`,
      `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>${rowsXml}</sheetData></worksheet>`,
    );
  });
  zip.file(
    "[Content_Types].xml",
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>${sheets
      .map(
        (_, k) =>
          `<Override PartName="/xl/worksheets/sheet${k + 1}.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`,
      )
      .join(
        "",
      )}<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>`,
  );
  zip.file(
    "_rels/.rels",
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
  );
  zip.file(
    "xl/workbook.xml",
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>${sheets
      .map((s, k) => `<sheet name="${esc(s.name)}" sheetId="${k + 1}" r:id="rId${k + 1}"/>`)
      .join("")}</sheets></workbook>`,
  );
  zip.file(
    "xl/_rels/workbook.xml.rels",
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${sheets
      .map(
        (_, k) =>
          `<Relationship Id="rId${k + 1}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet${k + 1}.xml"/>`,
      )
      .join(
        "",
      )}<Relationship Id="rId${sheets.length + 1}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>`,
  );
  zip.file(
    "xl/sharedStrings.xml",
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="${shared.length}" uniqueCount="${shared.length}">${shared
      .map((s) => `<si><t>${esc(s)}</t></si>`)
      .join("")}</sst>`,
  );
  return zip.generateAsync({ type: "nodebuffer", compression: "DEFLATE" });
}

/** A minimal zip writer (no CRCs: the guard must reject these before anything checks them). */
export function rawZip(
  entries: { name: string; data: Buffer; deflate?: boolean }[],
  declaredCount?: number,
): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name);
    const body = e.deflate ? deflateRawSync(e.data, { level: 9 }) : e.data;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(e.deflate ? 8 : 0, 8);
    local.writeUInt32LE(body.length, 18);
    // The declared size lies on purpose: the guard must count what really inflates.
    local.writeUInt32LE(Math.min(e.data.length, 1000), 22);
    local.writeUInt16LE(name.length, 26);
    parts.push(local, name, body);
    const cd = Buffer.alloc(46);
    cd.writeUInt32LE(0x02014b50, 0);
    cd.writeUInt16LE(20, 4);
    cd.writeUInt16LE(20, 6);
    cd.writeUInt16LE(e.deflate ? 8 : 0, 10);
    cd.writeUInt32LE(body.length, 20);
    cd.writeUInt32LE(Math.min(e.data.length, 1000), 24);
    cd.writeUInt16LE(name.length, 28);
    cd.writeUInt32LE(offset, 42);
    central.push(cd, name);
    offset += 30 + name.length + body.length;
  }
  const cdBuf = Buffer.concat(central);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  const count = (declaredCount ?? entries.length) & 0xffff;
  eocd.writeUInt16LE(count, 8);
  eocd.writeUInt16LE(count, 10);
  eocd.writeUInt32LE(cdBuf.length, 12);
  eocd.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, cdBuf, eocd]);
}

/** The summary sheet's ratio columns, derived from counts as the service derives them. */
const ratio = (a: number, b: number) => (b === 0 ? 0 : a / b);

export function withRatios(v: Record<string, number>): Record<string, number> {
  const g = (k: string) => v[k] ?? 0;
  return {
    ...v,
    "오픈율(건)": ratio(g("오픈 수(건)"), g("발송 수(건)")),
    "오픈율(명)": ratio(g("오픈 수(명)"), g("발송 수(명)")),
    "전환율(건)": ratio(g("전환 수(건)"), g("오픈 수(건)")),
    "전환율(명)": ratio(g("전환 수(명)"), g("오픈 수(명)")),
    ROAS: ratio(g("전환 수익"), g("집행 비용")),
    객단가: ratio(g("전환 수익"), g("전환 수(건)")),
    CAC: ratio(g("집행 비용"), g("전환 수(건)")),
  };
}
