import type { Reporter, TestModule, Vitest } from "vitest/node";
import { REQUIRE_ALL_TESTS } from "../helpers/needs.js";

/**
 * Reporter that ends the run with one line per test file whose tests were skipped for want of a
 * program (test/helpers/needs.ts): the file, how many tests, what is missing and how to install
 * it. Next to vitest's own summary, which counts them only as "skipped".
 */
export class MissingPrograms implements Reporter {
  private vitest: Vitest | undefined;

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const lines: string[] = [];
    for (const module of modules) {
      const skipped = new Map<string, number>();
      for (const test of module.children.allTests()) {
        const reason = test.meta().missing;
        if (reason !== undefined && test.result().state === "skipped") {
          skipped.set(reason, (skipped.get(reason) ?? 0) + 1);
        }
      }
      for (const [reason, count] of skipped) {
        const tests = count === 1 ? "1 test" : `${count} tests`;
        lines.push(` Skipped ${module.relativeModuleId} (${tests}): ${reason}`);
      }
    }
    if (lines.length === 0 || this.vitest === undefined) return;
    lines.sort();
    lines.push(
      ` (${REQUIRE_ALL_TESTS}=1 makes a missing program fail the run instead, as CI does.)`,
    );
    this.vitest.logger.log(`\n${lines.join("\n")}\n`);
  }
}
