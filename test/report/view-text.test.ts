import { describe, expect, it } from "vitest";
import { contrast, over, type Rgba, readable } from "../../src/report/view/color-math.js";
import { shorten, shortLabels } from "../../src/report/view/labels.js";
import { formatsFor, usableLocale } from "../../src/report/view/locale-format.js";

/**
 * The report view's own text, without a browser: axis labels cut so the end that tells bars
 * apart stays, numbers and dates in the host's locale, and text colours made readable.
 */

const ROUNDS = [
  "tsk_7814637a2… 03-01 10:00 그룹A",
  "tsk_7814637a2… 03-01 10:00 그룹B",
  "tsk_7814637a2… 03-01 10:00 대조군",
  "tsk_7814637a2… 03-08 10:00",
];

describe("axis labels", () => {
  it("a round's label keeps its group when cut, and every label stays distinct", () => {
    for (const max of [22, 16, 12]) {
      const cut = shortLabels(ROUNDS, max);
      expect(new Set(cut).size).toBe(ROUNDS.length);
      for (const [i, label] of cut.entries()) {
        expect([...label].length).toBeLessThanOrEqual(max);
        expect(label).toContain("…");
        const group = ROUNDS[i]?.split(" ").at(-1) ?? "?";
        expect(label.endsWith(group)).toBe(true);
      }
    }
    expect(shortLabels(ROUNDS, 22)[0]).toBe("tsk_7814637… 10:00 그룹A");
  });

  it("labels that fit are left alone; labels that only differ in the middle stay whole", () => {
    expect(shortLabels(["00", "01", "02"], 22)).toEqual(["00", "01", "02"]);
    const middle = ["campaign alpha 01 spring sale", "campaign alpha 02 spring sale"];
    const cut = shortLabels(middle, 12);
    expect(new Set(cut).size).toBe(2);
    expect(shorten("Conversion per user: send groups − 대조군", 30)).toBe(
      "Conversion… send groups − 대조군",
    );
  });
});

describe("numbers and dates in the host's locale", () => {
  it("ko-KR, en-US and de-DE write counts, rates, durations, ticks and dates their way", () => {
    const ko = formatsFor("ko-KR");
    const en = formatsFor("en-US");
    const de = formatsFor("de-DE");
    expect([ko, en, de].map((f) => f.value(1_234_567, "count"))).toEqual([
      "1,234,567",
      "1,234,567",
      "1.234.567",
    ]);
    expect([ko, en, de].map((f) => f.value(0.1234, "percent"))).toEqual([
      "12.3%",
      "12.3%",
      "12,3\u00a0%",
    ]);
    expect(ko.value(252, "seconds")).toBe("4.2분");
    expect(en.value(252, "seconds")).toBe("4.2 min");
    expect(en.value(45, "seconds")).toBe("45 sec");
    expect(ko.axis(12_345, "count")).toBe("1.2만");
    expect(en.axis(12_345, "count")).toBe("12.3K");
    expect(en.axis(300, "seconds")).toBe("5 min");
    expect(en.axis(5400, "seconds")).toBe("1.5 hr");
    expect(de.signed(-0.012, "percent")).toBe("−1,2\u00a0%");
    expect(en.signed(0.012, "percent")).toBe("+1.2%");
    expect(ko.categoryShort("2025-03-01")).toBe("3월 1일");
    expect(en.categoryShort("2025-03-01")).toBe("Mar 1");
    expect(de.categoryFull("2025-03-01")).toBe("01.03.2025");
    // Category text that is not a date is left as it is.
    expect(ko.categoryShort("tsk_1 03-01 10:00 A")).toBe("tsk_1 03-01 10:00 A");
  });

  it("a missing value is '-' in a table and nothing where the caller says so (the legend)", () => {
    const en = formatsFor("en-US");
    expect(en.value(null, "count")).toBe("-");
    expect(en.value(null, "count", "")).toBe("");
    expect(en.value(Number.NaN, "percent", "")).toBe("");
  });

  it("a locale Intl does not know falls back to the browser's, not to an error", () => {
    expect(usableLocale("ko-KR")).toBe("ko-KR");
    expect(usableLocale("not a locale!")).toBeUndefined();
    expect(usableLocale("")).toBeUndefined();
    expect(formatsFor("not a locale!").value(1234, "count")).toBe(
      new Intl.NumberFormat().format(1234),
    );
  });
});

describe("readable text colours", () => {
  const white: Rgba = [255, 255, 255, 255];
  const card: Rgba = [245, 245, 245, 255];
  const dark: Rgba = [45, 45, 45, 255];

  it("a colour that reads is kept; one that does not is moved just past 4.5:1", () => {
    const primary: Rgba = [31, 41, 55, 255];
    expect(readable(primary, [card])).toEqual(primary);
    // The reference host's secondary text on its secondary background: 4.35:1.
    const secondary: Rgba = [107, 114, 128, 255];
    expect(contrast(secondary, card)).toBeLessThan(4.5);
    const fixed = readable(secondary, [card]);
    expect(contrast(fixed, card)).toBeGreaterThanOrEqual(4.5);
    expect(contrast(fixed, card)).toBeLessThan(4.7);
    // Darker, not lighter, on a light card; lighter on a dark one.
    expect(fixed[0]).toBeLessThan(secondary[0]);
    const onDark = readable([80, 80, 80, 255], [dark]);
    expect(onDark[0]).toBeGreaterThan(80);
    expect(contrast(onDark, dark)).toBeGreaterThanOrEqual(4.5);
  });

  it("a translucent colour is judged as painted, on every background given", () => {
    const ghost: Rgba = [31, 41, 55, 90];
    expect(contrast(over(ghost, white), white)).toBeLessThan(4.5);
    const fixed = readable(ghost, [white, card]);
    expect(Math.min(contrast(fixed, white), contrast(fixed, card))).toBeGreaterThanOrEqual(4.5);
  });
});
