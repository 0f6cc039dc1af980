import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import checkExport from "../../../src/tools/check-export.js";
import startExport from "../../../src/tools/start-export.js";
import summarizeExport from "../../../src/tools/summarize-export.js";
import { type Harness, startHarness } from "../../helpers/tool-harness.js";

type Properties = Record<string, unknown>;
const properties = (schema: z.ZodType): Properties =>
  (z.toJSONSchema(schema, { io: "output" }) as { properties: Properties }).properties;

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

/** The job-state fields both export tools report, which must agree for the same job. */
const JOB_STATE = [
  "status",
  "file_path",
  "file_bytes",
  "resource_uri",
  "from_date",
  "to_date",
] as const;

describe("export tool results", () => {
  it("start_export and check_export report one completed job alike, each valid against its schema", async () => {
    const scenarioId = h.sandbox.world.scenarios[0]?._id;
    if (scenarioId === undefined) throw new Error("no scenario in the sandbox world");
    const started = await h.call("start_export", {
      type: "scenario_daily_metrics",
      scenario_id: scenarioId,
      from: "2026-10-01",
      to: "2026-10-03",
      wait_seconds: 30,
    });
    expect(started.isError).toBeFalsy();
    expect(started.structured.status).toBe("completed");
    const jobId = (started.structured.job as { _id: string })._id;
    const checked = await h.call("check_export", { job_id: jobId, wait_seconds: 0 });
    expect(checked.isError).toBeFalsy();

    for (const field of JOB_STATE) {
      expect(started.structured[field], field).toBeDefined();
      expect(checked.structured[field], field).toEqual(started.structured[field]);
    }
    expect((checked.structured.job as { _id: string })._id).toBe(jobId);
    expect(checked.structured.done).toBe(true);
    // What each tool returned is what its output schema (as clients see it) promises.
    expect(startExport.outputSchema.safeParse(started.structured).error).toBeUndefined();
    expect(checkExport.outputSchema.safeParse(checked.structured).error).toBeUndefined();
  });

  it("check_export and summarize_export take job_id with the same base description", () => {
    const describeJobId = (schema: z.ZodType) =>
      (properties(schema).job_id as { description: string }).description;
    const check = describeJobId(checkExport.inputSchema);
    const summarize = describeJobId(summarizeExport.inputSchema);
    const base = "`job._id` from start_export or check_export's list.";
    expect(check.startsWith(base)).toBe(true);
    expect(summarize.startsWith(base)).toBe(true);
    expect(check).toContain("Omit to list recent jobs");
  });
});
