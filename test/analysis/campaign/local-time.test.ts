import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isLocalTime, localSeconds, NO_TIME } from "../../../src/analysis/campaign/local-time.js";

const p2 = (n: number): string => String(n).padStart(2, "0");
const text = (y: number, mo: number, d: number, h: number, mi: number, s: number): string =>
  `${String(y).padStart(4, "0")}-${p2(mo)}-${p2(d)} ${p2(h)}:${p2(mi)}:${p2(s)}`;
const seconds = (t: string): number => {
  const buf = Buffer.from(`,${t},`);
  return localSeconds(buf, 1, buf.length - 1);
};
const DIGIT_AT = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18];

describe("localSeconds", () => {
  it("equals the seconds since 2000-01-01 that Date.UTC gives, or NO_TIME beyond 32 bits", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.integer({ min: 1925, max: 2075 }), fc.integer({ min: 0, max: 9999 })),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 28 }),
        fc.integer({ min: 0, max: 23 }),
        fc.integer({ min: 0, max: 59 }),
        fc.integer({ min: 0, max: 59 }),
        (y, mo, d, h, mi, s) => {
          const date = new Date(Date.UTC(2000, mo - 1, d, h, mi, s));
          date.setUTCFullYear(y); // Date.UTC reads years 0-99 as 1900-1999
          const expected = (date.getTime() - Date.UTC(2000, 0, 1)) / 1000;
          const int32 = Math.abs(expected) <= 2147483647;
          expect(seconds(text(y, mo, d, h, mi, s))).toBe(int32 ? expected : NO_TIME);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("refuses a non-digit at any digit position and out-of-range parts", () => {
    const good = "2026-10-28 12:01:27";
    expect(seconds(good)).not.toBe(NO_TIME);
    for (const at of DIGIT_AT) {
      for (const c of ["/", ":", "a", " ", "-"]) {
        expect(seconds(good.slice(0, at) + c + good.slice(at + 1))).toBe(NO_TIME);
      }
    }
    for (const bad of [
      text(2026, 0, 28, 12, 1, 27),
      text(2026, 13, 28, 12, 1, 27),
      text(2026, 10, 0, 12, 1, 27),
      text(2026, 10, 32, 12, 1, 27),
      text(2026, 10, 28, 24, 1, 27),
      text(2026, 10, 28, 12, 60, 27),
      text(2026, 10, 28, 12, 1, 61),
      "2026-10-28 12:01:2",
    ]) {
      expect(seconds(bad)).toBe(NO_TIME);
    }
    expect(isLocalTime(Buffer.from(good), 0, 19)).toBe(true);
  });
});
