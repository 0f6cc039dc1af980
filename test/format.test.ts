import { describe, expect, it } from "vitest";
import { formatNumber, markdownText, percent, table } from "../src/format.js";

describe("shared formatting", () => {
  it("table cells from outside cannot break the row or restyle the text", () => {
    const name = "**Sale** | <b>50%</b>\n[click](x) `code` _x_";
    expect(table(["name", "n"], [[name, 3]])).toBe(
      [
        "|name|n|",
        "|-|-|",
        "|\\*\\*Sale\\*\\* \\| \\<b\\>50%\\</b\\> \\[click\\](x) \\`code\\` \\_x\\_|3|",
      ].join("\n"),
    );
  });

  it("IDs with underscores inside a word stay copyable; a leading or trailing one is escaped", () => {
    expect(markdownText("cmp_1a2b exp_9 _lead trail_ 그룹_A")).toBe(
      "cmp_1a2b exp_9 \\_lead trail\\_ 그룹_A",
    );
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
