import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import JSZip from "jszip";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AnalysisError, summarizeFile } from "../../../src/analysis/index.js";
import { buildXlsx, METRICS, rawZip } from "./xlsx-fixture.js";

/** Hostile or oversized workbooks: each must fail (or pass) within bounded memory and time. */

let dir: string;
let good: string;
const NODE_ROW = (n: number, id: string) => [n, "알림톡", null, id, ...METRICS.map(() => 1)];
const SUMMARY_HEADER = ["#", "채널", "A/B 테스트 분기", "메시지 노드 ID", ...METRICS];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "xlsx-hostile-"));
  good = join(dir, "good.xlsx");
  await writeFile(
    good,
    await buildXlsx([
      { name: "요약", rows: [SUMMARY_HEADER, NODE_ROW(1, "n1")] },
      {
        name: "#1 알림톡",
        rows: [["n1"], ["날짜", ...METRICS], ["2025-03-01", ...METRICS.map(() => 1)]],
      },
    ]),
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * Runs the summary, returning its error (or null) and how much the process's memory grew (sampled
 * between event-loop turns, so a long synchronous loop shows up in time rather than here).
 */
async function measured(path: string): Promise<{ error: AnalysisError | null; growthMb: number }> {
  const before = process.memoryUsage().rss;
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 5);
  let error: AnalysisError | null = null;
  try {
    await summarizeFile(path);
  } catch (e) {
    if (!(e instanceof AnalysisError)) throw e;
    error = e;
  } finally {
    clearInterval(timer);
  }
  peak = Math.max(peak, process.memoryUsage().rss);
  // The next call still works.
  expect((await summarizeFile(good)).kind).toBe("scenario_daily_metrics");
  return { error, growthMb: (peak - before) / 1024 ** 2 };
}

const sheetXml = (rows: string) =>
  `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>${rows}</sheetData></worksheet>`;

/** A workbook of raw sheet XML bodies (inline strings, no shared strings). */
async function rawWorkbook(sheets: { name: string; xml: string }[]): Promise<Buffer> {
  const zip = new JSZip();
  zip.file(
    "[Content_Types].xml",
    `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/></Types>`,
  );
  zip.file(
    "_rels/.rels",
    `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
  );
  zip.file(
    "xl/workbook.xml",
    `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>${sheets.map((s, k) => `<sheet name="${s.name}" sheetId="${k + 1}" r:id="rId${k + 1}"/>`).join("")}</sheets></workbook>`,
  );
  zip.file(
    "xl/_rels/workbook.xml.rels",
    `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${sheets.map((_, k) => `<Relationship Id="rId${k + 1}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet${k + 1}.xml"/>`).join("")}</Relationships>`,
  );
  sheets.forEach((s, k) => {
    zip.file(`xl/worksheets/sheet${k + 1}.xml`, s.xml);
  });
  return zip.generateAsync({ type: "nodebuffer", compression: "DEFLATE" });
}

const str = (ref: string, text: string) =>
  `<c r="${ref}" t="inlineStr"><is><t>${text}</t></is></c>`;
const summaryXml = sheetXml(
  `<row r="1">${["A", "B", "C", "D"].map((c, i) => str(`${c}1`, ["#", "채널", "A/B 테스트 분기", "메시지 노드 ID"][i] as string)).join("")}${str("E1", "발송 수(건)")}</row><row r="2"><c r="A2"><v>1</v></c>${str("B2", "SMS")}${str("D2", "n1")}<c r="E2"><v>7</v></c></row>`,
);

describe("hostile and oversized workbooks", () => {
  it("a lone cell at row 1,048,576 on several sheets is read as one row each, in little memory", async () => {
    const far = sheetXml(
      `<row r="1">${str("A1", "n1")}</row><row r="2">${str("A2", "날짜")}${str("B2", "발송 수(건)")}</row><row r="3">${str("A3", "2025-03-01")}<c r="B3"><v>7</v></c></row><row r="1048576"><c r="A1048576"><v>1</v></c></row>`,
    );
    const path = join(dir, "farrow.xlsx");
    await writeFile(
      path,
      await rawWorkbook([
        { name: "요약", xml: summaryXml },
        { name: "#1 SMS", xml: far },
        { name: "#2 SMS", xml: far },
        { name: "#3 SMS", xml: far },
      ]),
    );
    const started = Date.now();
    const r = await summarizeFile(path);
    // Walking a million empty rows per sheet took seconds (and gigabytes with more sheets).
    expect(Date.now() - started).toBeLessThan(4000);
    if (r.kind !== "scenario_daily_metrics") throw new Error("wrong kind");
    // The far row has a first cell, so it counts as a (badly dated) day: 2 rows, not 1,048,574.
    expect(r.nodes[0]?.days).toBe(2);
    const { growthMb } = await measured(path);
    expect(growthMb).toBeLessThan(150);
  });

  it("a sheet with more rows or columns than an export has is not a scenario export", async () => {
    const rows = Array.from(
      { length: 5001 },
      (_, i) => `<row r="${i + 1}"><c r="A${i + 1}"><v>${i}</v></c></row>`,
    );
    const tall = join(dir, "tall.xlsx");
    await writeFile(
      tall,
      await rawWorkbook([
        { name: "요약", xml: summaryXml },
        { name: "#1", xml: sheetXml(rows.join("")) },
      ]),
    );
    const a = await measured(tall);
    expect(a.error?.code).toBe("not_scenario_export");
    expect(a.error?.message).toMatch(/more than 5000 rows/);

    const wide = join(dir, "wide.xlsx");
    await writeFile(
      wide,
      await rawWorkbook([
        { name: "요약", xml: summaryXml },
        { name: "#1", xml: sheetXml(`<row r="1"><c r="XFD1"><v>1</v></c></row>`) },
      ]),
    );
    const b = await measured(wide);
    expect(b.error?.code).toBe("not_scenario_export");
    expect(b.error?.message).toMatch(/beyond column 64/);
  });

  it("a zip whose directory is shifted (read differently by other zip readers) is refused", async () => {
    // The real workbook after a prefix that holds a decoy stored entry and a decoy directory at
    // the offsets the end record states: a reader that trusts the offsets sees only the decoy,
    // one that re-bases them (JSZip) sees the workbook. It must never reach exceljs.
    const inner = await readFileBuffer(good);
    const eocd = inner.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
    const cdSize = inner.readUInt32LE(eocd + 12);
    const cdOffset = inner.readUInt32LE(eocd + 16);
    const name = Buffer.from("benign.txt");
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt32LE(5, 18);
    local.writeUInt32LE(5, 22);
    local.writeUInt16LE(name.length, 26);
    const decoyLocal = Buffer.concat([local, name, Buffer.from("hello")]);
    const cd = Buffer.alloc(46);
    cd.writeUInt32LE(0x02014b50, 0);
    cd.writeUInt32LE(5, 20);
    cd.writeUInt32LE(5, 24);
    cd.writeUInt16LE(name.length, 28);
    cd.writeUInt16LE(cdSize - 46 - name.length, 32);
    const decoyCd = Buffer.concat([cd, name, Buffer.alloc(cdSize - 46 - name.length, 0x20)]);
    const prefix = Buffer.concat([decoyLocal, Buffer.alloc(cdOffset - decoyLocal.length), decoyCd]);
    const shifted = Buffer.from(inner);
    shifted.writeUInt16LE(1, eocd + 8);
    shifted.writeUInt16LE(1, eocd + 10);
    // JSZip reads this file as the workbook (the premise of the attack).
    const seen = await JSZip.loadAsync(Buffer.concat([prefix, shifted]));
    expect(Object.keys(seen.files)).toContain("xl/workbook.xml");
    const path = join(dir, "shifted.xlsx");
    await writeFile(path, Buffer.concat([prefix, shifted]));
    const { error } = await measured(path);
    expect(error?.code).toBe("malformed_xlsx");
    expect(error?.message).toMatch(/directory does not end where the end record starts/);
  });

  it("more directory entries than declared, and a leading slash does not dodge the shared-strings cap", async () => {
    const many = rawZip(
      Array.from({ length: 5 }, (_, i) => ({ name: `x/${i}`, data: Buffer.from("a") })),
      1,
    );
    const path = join(dir, "count.xlsx");
    await writeFile(path, many);
    const a = await measured(path);
    expect(a.error?.code).toBe("malformed_xlsx");
    expect(a.error?.message).toMatch(/more entries than it declares/);

    const strings = rawZip([
      {
        name: "/xl/sharedStrings.xml",
        data: Buffer.from("<si><t>a</t></si>".repeat(300_000)),
        deflate: true,
      },
    ]);
    const slash = join(dir, "slash.xlsx");
    await writeFile(slash, strings);
    const b = await measured(slash);
    expect(b.error?.code).toBe("zip_bomb");
    expect(b.error?.message).toMatch(/shared strings part/);
  });

  it("an .xlsx above 50 MiB is refused even when the caller allows larger files", async () => {
    const path = join(dir, "big.xlsx");
    await writeFile(path, Buffer.alloc(50 * 1024 ** 2 + 1));
    await expect(summarizeFile(path, { maxBytes: 2 * 1024 ** 3 })).rejects.toMatchObject({
      code: "too_large",
    });
    await rm(path);
  });

  it("a node ID that contains another node's ID does not take that node's daily sheet", async () => {
    const days = (n: number) =>
      Array.from({ length: n }, (_, i) => [`2025-03-0${i + 1}`, ...METRICS.map(() => 1)]);
    const path = join(dir, "prefix.xlsx");
    await writeFile(
      path,
      await buildXlsx([
        { name: "요약", rows: [SUMMARY_HEADER, NODE_ROW(1, "node-12"), NODE_ROW(2, "node-1")] },
        // Sheet names swapped against the numbers: only the title cell tells them apart.
        { name: "#2 알림톡", rows: [["#1"], ["node-12"], ["날짜", ...METRICS], ...days(3)] },
        { name: "#1 알림톡", rows: [["#2"], ["node-1"], ["날짜", ...METRICS], ...days(5)] },
      ]),
    );
    const r = await summarizeFile(path);
    if (r.kind !== "scenario_daily_metrics") throw new Error("wrong kind");
    expect(r.nodes.map((n) => [n.node_id, n.days, n.sheet])).toEqual([
      ["node-12", 3, "#2 알림톡"],
      ["node-1", 5, "#1 알림톡"],
    ]);
  });
});

async function readFileBuffer(path: string): Promise<Buffer> {
  const { readFile } = await import("node:fs/promises");
  return readFile(path);
}
