import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The house rule of docs/architecture.md: a limit of the service (spec section 8) is written once
 * in the client (src/api/limits.ts) and once in the sandbox (src/sandbox/spec.ts); code, texts
 * and comments elsewhere name the constant. A number written out again goes stale unseen when the
 * service changes the limit.
 */

const SRC = resolve(import.meta.dirname, "../src");
const WRITTEN_ONCE_IN = ["api/limits.ts", "sandbox/spec.ts"];

/** Each limit of spec section 8, and the ways a text or a line of code writes it out. */
const LIMITS: Record<string, RegExp[]> = {
  "creations per window (10 per 10 minutes)": [
    /\b10\s+(?:[a-z-]+\s+){0,3}per\s+(?:10\s*min|600\s*s)/gi,
    /\bper\s+(?:10\s*min(?:ute)?s?|600\s*(?:s|sec|seconds))\b/gi,
    /\b10-per-10\b/gi,
  ],
  "sends per export (2,000,000)": [/\b2[,_]?000[,_]?000\b/g],
  "rounds per export (120)": [/\b120[ -]rounds?\b/gi, /\bat most 120\b/gi],
  "polling interval (5 s)": [
    /\b(?:poll\w*|interval|every|at least)\s+(?:[a-z]+\s+){0,3}5\s*(?:s|sec|seconds?)\b/gi,
  ],
  "download URL validity (24 hours)": [
    /\b(?:valid\w*|expir\w*)\s+(?:[a-z]+\s+){0,3}24\s*(?:h|hours?)\b/gi,
    /\b24\s*(?:h|hours?)\s+(?:[a-z]+\s+){0,3}(?:valid\w*|URLs?|expir\w*)/gi,
  ],
  "metrics window (180 days)": [/\b180[ -]days?\b/gi],
  "recommend limit (1 to 1000)": [
    /\b1\s*(?:\.\.|to)\s*1,?000\b/gi,
    /\.max\(\s*1_?000\s*\)/g,
    /Math\.min\(\s*1_?000\b/g,
  ],
};

/**
 * Written-out limits kept on purpose: the file, the limit, and why. config.ts sizes
 * campaign_metrics' time bound in requests of the longest metrics window.
 */
const ALLOWED: ReadonlyArray<{ file: string; limit: string }> = [
  { file: "config.ts", limit: "metrics window (180 days)" },
];

/** The limits written out in `text`: comment lines are joined, so a phrase may span them. */
function writtenOutLimits(text: string): Array<{ limit: string; written: string }> {
  const joined = text.replace(/\s*\n\s*(?:\*(?!\/)|\/\/)?\s*/g, " ");
  return Object.entries(LIMITS).flatMap(([limit, patterns]) =>
    patterns.flatMap((pattern) =>
      [...joined.matchAll(pattern)].map((m) => ({ limit, written: m[0] })),
    ),
  );
}

describe("a limit of the service is written once on each side", () => {
  it("no module of src/ but api/limits.ts and sandbox/spec.ts writes one out", () => {
    const files = readdirSync(SRC, { recursive: true, encoding: "utf8" }).filter(
      (f) => f.endsWith(".ts") && !WRITTEN_ONCE_IN.includes(f),
    );
    // The walk must see the modules that use the limits, or the check would pass vacuously.
    expect(files).toContain("mcp/error-text.ts");
    const found = files.flatMap((file) =>
      writtenOutLimits(readFileSync(join(SRC, file), "utf8"))
        .filter(({ limit }) => !ALLOWED.some((a) => a.file === file && a.limit === limit))
        .map(({ limit, written }) => `${file}: "${written}" (${limit})`),
    );
    expect(found).toEqual([]);
  });

  it("each exception of the allow-list still writes its limit out", () => {
    const stale = ALLOWED.filter(
      ({ file, limit }) =>
        !writtenOutLimits(readFileSync(join(SRC, file), "utf8")).some((f) => f.limit === limit),
    );
    expect(stale).toEqual([]);
  });

  it("finds every limit of the spec written out, also across comment lines", () => {
    const samples = [
      "it allows 10 creations per 10 minutes",
      "the local mirror of the 10-per-10-minutes creation limit",
      "the service allows 10 per\n * 10 minutes, then 429",
      "over 2,000,000 sends",
      "const MAX = 2_000_000;",
      "a service export holds at most 120 rounds",
      "polled at most every 5 s",
      "URLs are valid 24 hours from their creation",
      "windows longer than 180 days",
      "`limit` outside 1..1000",
      "limit: z.number().int().min(1).max(1000)",
    ];
    const found = samples.map((s) => writtenOutLimits(s).map((f) => f.limit));
    expect(found.filter((limits) => limits.length === 0)).toEqual([]);
    expect(new Set(found.flat())).toEqual(new Set(Object.keys(LIMITS)));
  });

  it("leaves other numbers alone", () => {
    const texts = [
      "Date and time on a 24-hour clock",
      "figures (24 hours of opens) are kept whole",
      '"Access-Control-Max-Age": "600"',
      "past 10 minutes a chat has moved on",
      "a user is an index in [0, 1,000,000)",
      "it allows 12 creations per 15 minutes",
    ];
    expect(texts.flatMap(writtenOutLimits)).toEqual([]);
  });
});
