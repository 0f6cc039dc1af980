import { describe, expect, it } from "vitest";
import { describeRange, windowText } from "../../src/exports/budget-and-range.js";

describe("export wording shared by the tools", () => {
  it("says a budget window one way: whole minutes as min, else seconds", () => {
    expect(windowText(600)).toBe("10 min");
    expect(windowText(90)).toBe("90s");
  });

  it("writes an inclusive date range one way", () => {
    expect(describeRange("2026-11-01", "2026-11-07")).toBe("2026-11-01 to 2026-11-07 (inclusive)");
    expect(describeRange(undefined, undefined)).toBe("all rounds");
    expect(describeRange("2026-11-01", undefined)).toBe("2026-11-01 to (no end) (inclusive)");
  });
});
