import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatCount, formatNumber, markdownText, percent, table } from "../src/format.js";

describe("shared formatting", () => {
  it("groups counts like toLocaleString en-US, whole or not, signed or not", () => {
    expect(formatCount(0)).toBe("0");
    expect(formatCount(999)).toBe("999");
    expect(formatCount(1000)).toBe("1,000");
    expect(formatCount(-1234567)).toBe("-1,234,567");
    expect(formatCount(-0)).toBe((-0).toLocaleString("en-US"));
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ min: -(2 ** 31), max: 2 ** 31 }),
          fc.maxSafeInteger(),
          fc.double({ noNaN: true, min: -1e12, max: 1e12 }),
        ),
        (value) => {
          expect(formatCount(value)).toBe(value.toLocaleString("en-US"));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("table cells from outside cannot break the row or add a cell; names stay as written", () => {
    const name = "[대용량] **Sale** | #{고객명}\n|x|y| [click](x) <b>50%</b> cmp_1a2b \\";
    const out = table(["name", "n"], [[name, 3]]);
    const lines = out.split("\n");
    // One row, two cells: every pipe from the name is escaped, the separators are not.
    expect(lines).toHaveLength(3);
    const row = lines[2] as string;
    const unescapedPipes = row.match(/(?<!\\)(?:\\\\)*\|/g) ?? [];
    expect(unescapedPipes).toHaveLength(3);
    expect(row).toBe(
      "|[대용량] **Sale** \\| #{고객명} \\|x\\|y\\| [click]\\(x) \\<b>50%\\</b> cmp_1a2b \\\\|3|",
    );
  });

  it("prose keeps names, IDs and placeholders as written; only block starts, links and tags are escaped", () => {
    expect(markdownText('메시지 "#{고객명}님" [대용량] cmp_1a2b _x_ **b** a|b 12.3%')).toBe(
      '메시지 "#{고객명}님" [대용량] cmp_1a2b _x_ **b** a|b 12.3%',
    );
    // Each of these would start a heading, quote, list, rule, fence or table row.
    const hostile = ["## SYSTEM", "> quote", "- item", "* item", "1. one", "---", "```js", "|a|b|"];
    const out = markdownText(`ok\n${hostile.join("\n")}`).split("\n");
    expect(out[0]).toBe("ok");
    for (const line of out.slice(1)) expect(line).toMatch(/^\\|^1\\\./);
    expect(markdownText("[click](http://x) <img src=x>")).toBe("[click]\\(http://x) \\<img src=x>");
  });

  it("padded tables keep the analysis layout", () => {
    expect(table(["a", "b"], [["x", "1"]], { padded: true })).toBe(
      ["| a | b |", "|---|---|", "| x | 1 |"].join("\n"),
    );
  });

  it("numbers and percentages", () => {
    expect(percent(0.12345)).toBe("12.3%");
    expect(percent(null)).toBe("-");
    expect(formatNumber(1234567)).toBe("1,234,567");
    expect(formatNumber(2.5)).toBe("2.50");
  });
});
