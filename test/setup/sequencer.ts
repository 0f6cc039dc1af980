import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Test files that take far longer than the rest (the demo runs the whole conversation twice, side
 * by side, about 10 s; the soak makes 200 calls with faults, 10-20 s). Vitest orders
 * files by the durations of an earlier run, which a fresh clone (CI) does not have; there it
 * orders by file size, and a long file started last is the run's tail with the other workers idle.
 */
export const START_FIRST = [
  "test/scripts/demo.test.ts",
  "test/scripts/soak.test.ts",
  // Builds, unpacks and checks five MCP Bundles: about a minute of CPU.
  "test/package/bundle.test.ts",
  // Every prompt on every sandbox campaign and scenario: some 70 exports and their summaries.
  "test/prompts/prompt-calls.test.ts",
  // A download throttled past summarize_export's 20 s wait, among other provoked hints.
  "test/prompts/hint-calls.test.ts",
];

/** Vitest's own order, with the known long files moved to the front. */
export class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const rank = (file: TestSpecification) => {
      const at = START_FIRST.indexOf(relative(root, file.moduleId).split("\\").join("/"));
      return at < 0 ? START_FIRST.length : at;
    };
    // Array.prototype.sort is stable: every other file keeps vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
