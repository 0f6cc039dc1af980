import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * Two patterns that make a test pass without checking anything (CONTRIBUTING, "A test"): an empty
 * string standing in for a missing value (use `must` from test/helpers/must.ts), and an `expect`
 * that runs only when an `if` happens to hold (state the expected value for every case, or count
 * that the case occurred).
 */
const TEST_ROOT = fileURLToPath(new URL(".", import.meta.url));
const EMPTY_FALLBACK = /\?\? ""/;
const EXPECT_CALL = /\bexpect(\.\w+)*\(/;
const IF_HEAD = /\bif \(/;

/** The lines of one file breaking the rules, as `line: text`. */
function brokenRules(source: string): string[] {
  const lines = source.split("\n");
  return lines.flatMap((line, index) => {
    const next = lines[index + 1];
    const ifAt = line.search(IF_HEAD);
    // The if's statement goes on to the next line when its line ends in `{` or in its condition.
    const continues = /[{)]\s*$/.test(line);
    const guarded =
      ifAt >= 0 &&
      (EXPECT_CALL.test(line.slice(ifAt)) ||
        (continues && next !== undefined && EXPECT_CALL.test(next)));
    return EMPTY_FALLBACK.test(line) || guarded ? [`${index + 1}: ${line.trim()}`] : [];
  });
}

describe("test rules", () => {
  // The samples spell `if` and `??` as IF and QQ, so that this file keeps the rules too.
  const sample = (text: string) => text.replaceAll("IF", "if").replaceAll("QQ", "??");

  it("find a fallback to an empty string and an expect under an if", () => {
    const fallback = sample('const id = campaign?._id QQ "";');
    expect(brokenRules(fallback)).toEqual([`1: ${fallback}`]);
    expect(brokenRules(sample("IF (ok) expect(a).toBe(1);"))).toHaveLength(1);
    expect(brokenRules(sample("IF (ok) {\n  expect(a).toBe(1);\n}"))).toHaveLength(1);
    expect(brokenRules(sample("IF (ok)\n  expect.soft(a).toBe(1);"))).toHaveLength(1);
    expect(brokenRules(sample("} else IF (ok) expect(a).toBe(1);"))).toHaveLength(1);
  });

  it("leave alone a guard that throws or returns, and a loop over every element", () => {
    expect(
      brokenRules('if (x === undefined) throw new Error("no x");\nexpect(x).toBe(1);'),
    ).toEqual([]);
    expect(brokenRules("if (done) return;\nexpect(a).toBe(1);")).toEqual([]);
    expect(brokenRules("for (const r of rows) expect(r).toBeDefined();")).toEqual([]);
    expect(brokenRules('const x = must(campaign?._id, "campaign");')).toEqual([]);
  });

  it("hold in every test file", async () => {
    const files = (await readdir(TEST_ROOT, { recursive: true, encoding: "utf8" })).filter(
      (f) => f.endsWith(".test.ts") && !f.split("/").includes("node_modules"),
    );
    expect(files.length).toBeGreaterThan(100);
    const broken: string[] = [];
    for (const file of files) {
      const found = brokenRules(await readFile(join(TEST_ROOT, file), "utf8"));
      broken.push(...found.map((f) => `${file}:${f}`));
    }
    expect(broken).toEqual([]);
  });
});
