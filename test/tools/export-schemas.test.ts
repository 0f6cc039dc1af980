import { describe, expect, it } from "vitest";
import { z } from "zod";
import checkExport from "../../src/tools/check-export.js";
import startExport from "../../src/tools/start-export.js";
import summarizeExport from "../../src/tools/summarize-export.js";

/** The result fields start_export and check_export share are declared once, alike in both. */

type Properties = Record<string, unknown>;
const properties = (schema: z.ZodType): Properties =>
  (z.toJSONSchema(schema, { io: "output" }) as { properties: Properties }).properties;

describe("export tool schemas", () => {
  it("start_export and check_export describe the job result fields identically", () => {
    const start = properties(startExport.outputSchema);
    const check = properties(checkExport.outputSchema);
    const shared = [
      "status",
      "download_progress",
      "earlier_download_error",
      "file_path",
      "file_bytes",
      "resource_uri",
      "from_date",
      "to_date",
      "error",
      "budget",
      "job",
    ];
    for (const field of shared) {
      expect(start[field], field).toBeDefined();
      expect(check[field], field).toEqual(start[field]);
    }
  });

  it("check_export and summarize_export take job_id with the same base description", () => {
    const describeJobId = (schema: z.ZodType) =>
      (properties(schema).job_id as { description: string }).description;
    const check = describeJobId(checkExport.inputSchema);
    const summarize = describeJobId(summarizeExport.inputSchema);
    const base = "Export job ID (`job._id`) returned by start_export, or listed by check_export.";
    expect(check.startsWith(base)).toBe(true);
    expect(summarize.startsWith(base)).toBe(true);
    expect(check).toContain("Omit to list recent jobs");
  });
});
