import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AnalysisError, summarizeFile } from "../../src/analysis/index.js";
import { campaignRows, HEADER, toCsv } from "./campaign/fixture.js";
import { rawZip } from "./scenario/xlsx-fixture.js";

let dir: string;
let good: string;
let goodText: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "bad-files-"));
  good = join(dir, "good.csv");
  goodText = toCsv(campaignRows(3, 20), "\n");
  await writeFile(good, goodText);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function failure(name: string, content: string | Buffer): Promise<AnalysisError> {
  const path = join(dir, name);
  await writeFile(path, content);
  const started = Date.now();
  const before = process.memoryUsage().rss;
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 5);
  try {
    await summarizeFile(path);
  } catch (error) {
    clearInterval(timer);
    expect(Date.now() - started).toBeLessThan(5000);
    // Memory stays bounded (sampled between event-loop turns, and once more at the end).
    peak = Math.max(peak, process.memoryUsage().rss);
    expect((peak - before) / 1024 ** 2).toBeLessThan(150);
    expect(error).toBeInstanceOf(AnalysisError);
    // The next call still works.
    const ok = await summarizeFile(good);
    expect(ok.kind).toBe("campaign_event_data");
    return error as AnalysisError;
  }
  clearInterval(timer);
  throw new Error(`${name} was accepted`);
}

const row = (cells: string[]) => `${cells.join(",")}\n`;
const sentRow = [
  "t",
  "2025-03-01 10:00:00",
  "",
  "message_sent",
  "u",
  "p",
  "2025-03-01 10:00:00",
  "sms",
  "",
  "",
  "{}",
  "{}",
  "{}",
];

describe("bad files get a clear error and leave the next call working", () => {
  it("truncated file", async () => {
    const cut = goodText.slice(0, Math.floor(goodText.length * 0.6));
    const lastLineStart = cut.lastIndexOf("\n");
    // Cut inside an unquoted part of a row.
    const text = `${cut.slice(0, lastLineStart + 1)}${"task-9,2025-03-01 10:00:00,그룹A,message_se"}`;
    const error = await failure("truncated.csv", text);
    const line = text.split("\n").length;
    expect(error.message).toContain(`line ${line} has 4 columns`);
    expect(error.message).toMatch(/truncated/);
  });

  it("unmatched quote", async () => {
    const error = await failure("quote.csv", `${row(HEADER)}${row(sentRow)}t,"open`);
    expect(error.code).toBe("malformed_csv");
    expect(error.message).toMatch(/line 3/);
  });

  it("wrong header, without echoing the file", async () => {
    const error = await failure("header.csv", "secret_column,b\n1,2\n");
    expect(error.code).toBe("not_campaign_export");
    expect(error.message).not.toContain("secret_column");
  });

  it("wrong column count", async () => {
    const error = await failure(
      "columns.csv",
      `${row(HEADER)}${row(sentRow)}${row(sentRow.slice(0, 5))}${row(sentRow)}`,
    );
    expect(error.message).toMatch(/line 3 has 5 columns instead of 13/);
  });

  it("invalid UTF-8", async () => {
    const bytes = Buffer.concat([
      Buffer.from(`${row(HEADER)}${row(sentRow)}`),
      Buffer.from([0x74, 0xc3, 0x28, 0x0a]),
    ]);
    const error = await failure("utf8.csv", bytes);
    expect(error.message).toMatch(/Line 3 is not valid UTF-8/);
  });

  it("a header with a UTF-8 BOM is accepted", async () => {
    const path = join(dir, "bom.csv");
    await writeFile(path, `\uFEFF${row(HEADER)}${row(sentRow)}`);
    const r = await summarizeFile(path);
    expect(r.kind === "campaign_event_data" && r.rows).toBe(1);
  });

  it(".xlsx that is not a zip", async () => {
    const error = await failure("plain.xlsx", "just some text, not a zip at all");
    expect(error.code).toBe("malformed_xlsx");
  });

  it("zip bomb (declared sizes lie)", async () => {
    const data = Buffer.alloc(80 * 1024 * 1024, 0x41);
    const error = await failure(
      "bomb.xlsx",
      rawZip([{ name: "xl/worksheets/sheet1.xml", data, deflate: true }]),
    );
    expect(error.code).toBe("zip_bomb");
    expect(error.message).toMatch(/xl\/worksheets\/sheet1\.xml/);
  });

  it("shared-strings bomb", async () => {
    const data = Buffer.from("<si><t>a</t></si>".repeat(1_200_000));
    const error = await failure(
      "strings.xlsx",
      rawZip([{ name: "xl/sharedStrings.xml", data, deflate: true }]),
    );
    expect(error.code).toBe("zip_bomb");
    expect(error.message).toMatch(/shared strings/);
  });

  it("zip with 100,000 entries", async () => {
    const entries = Array.from({ length: 100_000 }, (_, i) => ({
      name: `f${i}`,
      data: Buffer.alloc(0),
    }));
    const error = await failure("many.xlsx", rawZip(entries));
    expect(error.code).toBe("zip_bomb");
    expect(error.message).toMatch(/entries/);
  });

  it("other extensions, directories and missing files", async () => {
    await expect(summarizeFile(join(dir, "nope.csv"))).rejects.toMatchObject({ code: "not_found" });
    await writeFile(join(dir, "data.txt"), "x");
    await expect(summarizeFile(join(dir, "data.txt"))).rejects.toMatchObject({
      code: "unsupported_file",
    });
    // A .csv link to a non-export is judged by its real path.
    await symlink(join(dir, "data.txt"), join(dir, "link.csv"));
    await expect(summarizeFile(join(dir, "link.csv"))).rejects.toMatchObject({
      code: "unsupported_file",
    });
    await expect(summarizeFile(good, { maxBytes: 10 })).rejects.toMatchObject({
      code: "too_large",
    });
  });
});
