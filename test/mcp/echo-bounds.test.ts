import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clipEchoes, clipValue } from "../../src/clip.js";
import { type Harness, startHarness } from "../helpers/tool-harness.js";

/** Error texts quote what was wrong with the input, never the input at any length. */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const MB = 1024 * 1024;
/** Well above the longest error we write (~1,000) and far below any echo of 1 MB. */
const BOUND = 4200;

describe("error texts echo input only in part", () => {
  it("a campaign_id of 1 MB (refused by the service's body limit) and of 600,000 characters", async () => {
    for (const length of [MB, 600_000]) {
      const result = await h.call("start_export", {
        type: "campaign_event_data",
        campaign_id: "c".repeat(length),
        wait_seconds: 0,
      });
      expect(result.isError).toBe(true);
      expect(result.text.length).toBeLessThan(BOUND);
    }
  });

  it("an unknown argument with a 1 MB name, and a 1 MB value of the wrong type", async () => {
    const name = await h.call("check_export", { ["x".repeat(MB)]: 1 });
    expect(name.isError).toBe(true);
    expect(name.text.length).toBeLessThan(BOUND);
    expect(name.text).toContain("1,048,576 characters");
    const value = await h.call("start_export", {
      type: "campaign_event_data",
      wait_seconds: "9".repeat(MB),
    });
    expect(value.isError).toBe(true);
    expect(value.text.length).toBeLessThan(BOUND);
  });

  it("a 1 MB job_id and a 1 MB date", async () => {
    for (const [tool, args] of [
      ["check_export", { job_id: "j".repeat(MB) }],
      ["start_export", { type: "campaign_event_data", campaign_id: "c1", from: "2".repeat(MB) }],
      ["campaign_metrics", { task_from: `2026-11-01${" x".repeat(MB / 2)}` }],
    ] as const) {
      const result = await h.call(tool, args);
      expect(result.isError, tool).toBe(true);
      expect(result.text.length, tool).toBeLessThan(BOUND);
    }
  });
});

describe("clip helpers", () => {
  it("keep short values as they are and say how long a cut one was", () => {
    expect(clipValue("abc")).toBe("abc");
    expect(clipValue("a".repeat(100), 10)).toBe(`${"a".repeat(10)}… (100 characters)`);
    const call =
      'start_export {"type":"campaign_event_data","campaign_id":"6f1c2a9be04d3c7a81f5e290","from":"2026-10-01","to":"2026-10-31"}';
    expect(clipEchoes(`Error: ${call}`)).toBe(`Error: ${call}`);
    expect(clipEchoes(`id ${"z".repeat(5000)} end`)).toBe(
      `id ${"z".repeat(60)}… (5,000 characters) end`,
    );
    expect(clipEchoes("a b ".repeat(5000)).length).toBeLessThan(4100);
  });
});
