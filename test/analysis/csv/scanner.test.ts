import { parse } from "csv-parse/sync";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CsvScanError, CsvScanner, fieldText } from "../../../src/analysis/csv/scanner.js";

/** Our own RFC 4180 writer: quote only when needed, double the quotes. */
function writeCsv(records: string[][], eol: string): string {
  return records
    .map((r) =>
      r.map((f) => (/[",\r\n]/.test(f) || f === "" ? `"${f.replaceAll('"', '""')}"` : f)).join(","),
    )
    .join(eol)
    .concat(eol);
}

function scanAll(buf: Buffer, chunkSizes: number[], sliceBytes?: number): string[][] {
  const out: string[][] = [];
  const scanner = new CsvScanner(
    (rec) => {
      const row: string[] = [];
      for (let i = 0; i < rec.count; i++) row.push(fieldText(rec, i));
      out.push(row);
    },
    { sliceBytes },
  );
  let pos = 0;
  let k = 0;
  while (pos < buf.length) {
    const size = Math.max(1, chunkSizes[k++ % chunkSizes.length] ?? 1);
    scanner.push(buf.subarray(pos, pos + size));
    pos += size;
  }
  scanner.end();
  return out;
}

function scanError(text: string | Buffer, sliceBytes?: number): CsvScanError {
  try {
    scanAll(typeof text === "string" ? Buffer.from(text) : text, [3, 7], sliceBytes);
  } catch (error) {
    if (error instanceof CsvScanError) return error;
    throw error;
  }
  throw new Error("expected a CsvScanError");
}

const pieces = ["a", ",", '"', "\r", "\n", "\r\n", '{"k":1}', "😀", "한글", " ", "x1", '""'];
const fieldArb = fc
  .array(fc.oneof(fc.constantFrom(...pieces), fc.string({ maxLength: 4 })), { maxLength: 6 })
  .map((p) => p.join(""));

describe("CsvScanner", () => {
  it("agrees with csv-parse record for record on random input in random chunks", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fieldArb, { minLength: 2, maxLength: 6 }), {
          minLength: 1,
          maxLength: 20,
        }),
        fc.constantFrom("\n", "\r\n"),
        fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 8 }),
        // Scan slices of a few bytes stop and resume the scan inside every kind of field.
        fc.option(fc.integer({ min: 1, max: 9 }), { nil: undefined }),
        (records, eol, chunks, slice) => {
          const text = writeCsv(records, eol);
          const oracle = parse(text, {
            relax_column_count: true,
            record_delimiter: eol,
          }) as string[][];
          const ours = scanAll(Buffer.from(text), chunks, slice);
          expect(ours).toEqual(oracle);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("agrees with csv-parse on inputs far longer than its 16 KiB scan windows, in large chunks", () => {
    // Records cross the windows the byte index (csv/specials.ts) is built over, at every offset.
    fc.assert(
      fc.property(
        fc.array(fc.array(fieldArb, { minLength: 1, maxLength: 13 }), {
          minLength: 2000,
          maxLength: 4000,
        }),
        fc.constantFrom("\n", "\r\n"),
        fc.array(fc.integer({ min: 1, max: 300_000 }), { minLength: 1, maxLength: 4 }),
        (records, eol, chunks) => {
          const text = writeCsv(records, eol);
          const oracle = parse(text, {
            relax_column_count: true,
            record_delimiter: eol,
          }) as string[][];
          expect(scanAll(Buffer.from(text), chunks)).toEqual(oracle);
        },
      ),
      { numRuns: 10 },
    );
  });

  it("after reset reads new input as a fresh scanner would, whatever the last one left", () => {
    const rows: string[][] = [];
    const scanner = new CsvScanner((rec) => {
      const row: string[] = [];
      for (let i = 0; i < rec.count; i++) row.push(fieldText(rec, i));
      rows.push(row);
    });
    // The first input stops inside a quoted field, on line 3; the second fails mid-record.
    scanner.push(Buffer.from('a,b\nc,"d\ne'));
    expect(rows).toEqual([["a", "b"]]);
    scanner.reset();
    expect(() => scanner.push(Buffer.from('x,y"z\n'))).toThrow(CsvScanError);
    scanner.reset();
    rows.length = 0;
    scanner.push(Buffer.from('x,"y"\r\n'));
    scanner.push(Buffer.from("z,w"));
    expect(scanner.currentLine).toBe(2);
    scanner.end();
    expect(rows).toEqual([
      ["x", "y"],
      ["z", "w"],
    ]);
    scanner.reset();
    expect(scanner.atRecordBoundary).toBe(true);
    expect(scanner.currentLine).toBe(1);
  });

  it("hashes unquoted key fields, also of records with a quoted field after them, and says which records have the hash", () => {
    const seen: { key: string; hashed: boolean; hash: string }[] = [];
    const scanner = new CsvScanner(
      (rec) => {
        seen.push({
          key: [0, 1].map((i) => fieldText(rec, i)).join("|"),
          hashed: rec.keyHashed,
          hash: `${rec.keyHash[0]}:${rec.keyHash[1]}`,
        });
      },
      { keyFields: 2 },
    );
    scanner.push(
      Buffer.from('t1,g1,x\r\nt1,g2,y\nt1,g1,zz,w\n"t1",g1,q\nt1,g1,"v"\nt1,"g1",q\nt1,g1\r'),
    );
    scanner.end();
    expect(seen.map((r) => [r.key, r.hashed])).toEqual([
      ["t1|g1", true],
      ["t1|g2", true],
      ["t1|g1", true],
      ["t1|g1", false], // a quoted key field: read by the state machine, not hashed
      ["t1|g1", true], // a quoted field after the key: read by the state machine, key hashed
      ["t1|g1", false], // the key's last field quoted
      ["t1|g1", true], // ended by a lone CR (and the input's end)
    ]);
    expect(seen[0]?.hash).toBe(seen[2]?.hash);
    expect(seen[4]?.hash).toBe(seen[0]?.hash);
    expect(seen[6]?.hash).toBe(seen[0]?.hash);
    expect(seen[0]?.hash).not.toBe(seen[1]?.hash);
  });

  it("reads a last record without a line ending and quoted fields with line breaks", () => {
    expect(scanAll(Buffer.from('a,"b\nc"\r\nd,"e""f"'), [2])).toEqual([
      ["a", "b\nc"],
      ["d", 'e"f'],
    ]);
  });

  it.each([undefined, 1, 2, 5])("names the line of an unclosed quote (scan slice %s)", (slice) => {
    const error = scanError('h1,h2\nx,y\nx,"never\nclosed', slice);
    expect(error.code).toBe("unmatched_quote");
    expect(error.line).toBe(3);
  });

  it.each([undefined, 1, 2, 5])(
    "names the line of a stray quote and of text after a closing quote (scan slice %s)",
    (slice) => {
      expect(scanError('a,b\r\n"x\ny",z\r\nab"c,d\r\n', slice).line).toBe(4);
      expect(scanError('a,b\n"x"y,z\n', slice).code).toBe("bad_quote");
    },
  );

  it("names the line of invalid UTF-8, across chunk boundaries", () => {
    const bad = Buffer.concat([
      Buffer.from('a,b\n"m\nn",한\nx,'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from("\n"),
    ]);
    const error = scanError(bad);
    expect(error.code).toBe("invalid_utf8");
    expect(error.line).toBe(4);
  });

  it("caps record and field size", () => {
    const big = `a,"${"x".repeat(5000)}"\n`;
    const scanner = new CsvScanner(() => {}, { maxRecordBytes: 1000, maxFieldBytes: 800 });
    expect(() => {
      for (let i = 0; i < big.length; i += 100) scanner.push(Buffer.from(big.slice(i, i + 100)));
    }).toThrow(CsvScanError);
  });
});
