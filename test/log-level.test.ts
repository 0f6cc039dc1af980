import { describe, expect, it } from "vitest";
import { getLogLevel, log } from "../src/log.js";
import { must } from "./helpers/must.js";

describe("servers under test", () => {
  it("log at warn unless a test asks for more, so a run shows failures and not info lines", () => {
    const lines: string[] = [];
    const original = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    try {
      log.info("tool call failed (an expected refusal)");
      log.warn("something a reader must see");
    } finally {
      process.stderr.write = original;
    }
    // CRM_LOG_LEVEL from the environment wins (CRM_LOG_LEVEL=info npm test shows everything).
    const asked = must(process.env.CRM_LOG_LEVEL, "CRM_LOG_LEVEL of the test run");
    expect(getLogLevel()).toBe(asked);
    // An info line shows only when the run asks for info or more.
    expect(lines.join("").includes("expected refusal")).toBe(asked === "info" || asked === "debug");
    expect(lines.join("")).toContain("something a reader must see");
  });
});
