import { describe, expect, it } from "vitest";
import { renderQueryTable } from "../../src/query/render.js";
import type { QueryResult } from "../../src/query/run.js";

/** 20 columns and 50 rows, of which 40 returned: more than the text table shows of either. */
function wideResult(): QueryResult {
  const columns = Array.from({ length: 20 }, (_, i) => ({ name: `c${i}`, type: "INTEGER" }));
  const rows = Array.from({ length: 40 }, (_, r) => columns.map((_, c) => r * 100 + c));
  return { columns, rows, row_count: 50, truncated: true, truncated_by: "max_rows", cells_cut: 0 };
}

describe("the text table says where the rest of the result is", () => {
  it("for a model: the tool's structuredContent", () => {
    const text = renderQueryTable(wideResult(), { maxRows: 30 });
    expect(text).toContain(
      "4 more column(s) not shown in this table (they are in structuredContent.rows)",
    );
    expect(text).toContain("Showing 30 of 50 rows (structuredContent.rows holds 40)");
  });

  it("on the command line: the --json output, never structuredContent", () => {
    const text = renderQueryTable(wideResult(), { maxRows: 30, fullRows: "the --json output" });
    expect(text).toContain("(they are in the --json output)");
    expect(text).toContain("(the --json output holds 40)");
    expect(text).not.toContain("structuredContent");
  });
});
