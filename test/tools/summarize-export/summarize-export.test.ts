import { writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ToolCall, ToolRuntime } from "../../../src/mcp/tool.js";
import type { RunningSandbox } from "../../../src/sandbox/types.js";
import startExport from "../../../src/tools/start-export.js";
import summarizeExport from "../../../src/tools/summarize-export.js";
import { campaignRows, toCsv } from "../../analysis/campaign/fixture.js";
import { type RuntimeHarness, startRuntimeHarness } from "../../helpers/tool-harness.js";

const call: ToolCall = { signal: new AbortController().signal, progress: async () => {} };

let dir: string;
let sandbox: RunningSandbox;
let runtime: ToolRuntime;
let harness: RuntimeHarness;

beforeAll(async () => {
  harness = await startRuntimeHarness({ jobSeconds: 0.3 });
  ({ dir, sandbox, runtime } = harness);
});
afterAll(async () => {
  await harness?.close();
});

describe("summarize_export", () => {
  it("summarizes a local file, and its structured result fits the output schema", async () => {
    const file = join(dir, "campaign.csv");
    const rows = campaignRows(5, 20);
    await writeFile(file, toCsv(rows));
    const out = await summarizeExport.handler({ file }, runtime, call);
    expect(out.structured.kind).toBe("campaign_event_data");
    expect(out.structured.rows).toBe(rows.length - 1);
    expect(out.structured.file_path).toBe(file);
    const parsed = summarizeExport.outputSchema.safeParse({
      ...out.structured,
      data_source: "service",
    });
    expect(parsed.success).toBe(true);
    expect(out.text.length).toBeLessThan(4000);
  });

  it("refuses a relative file path by name and expands a leading ~", async () => {
    await expect(summarizeExport.handler({ file: "notexport.csv" }, runtime, call)).rejects.toThrow(
      /file must be an absolute path.*"notexport\.csv" is relative/,
    );
    // The home folder is outside the data folder: the refusal names the expanded path.
    const expanded = join(homedir(), ".crm-tilde-never-made", "campaign.csv");
    await expect(
      summarizeExport.handler({ file: "~/.crm-tilde-never-made/campaign.csv" }, runtime, call),
    ).rejects.toThrow(`${JSON.stringify(expanded)} is outside the data folder`);
  });

  it("asks for exactly one of job_id and file", async () => {
    await expect(summarizeExport.handler({}, runtime, call)).rejects.toThrow(/exactly one/);
    await expect(
      summarizeExport.handler({ job_id: "x", file: "/tmp/x.csv" }, runtime, call),
    ).rejects.toThrow(/exactly one/);
  });

  it("downloads and summarizes the file of a job_id", async () => {
    const campaign = sandbox.world.campaigns.find(
      (c) => c.role === "normal" && c.tasks.some((t) => t.aggregated),
    );
    if (campaign === undefined) throw new Error("no normal campaign in the sandbox world");
    const started = await startExport.handler(
      { type: "campaign_event_data", campaign_id: campaign._id, wait_seconds: 20 },
      runtime,
      call,
    );
    const jobId = (started.structured as { job?: { _id: string } }).job?._id as string;
    const out = await summarizeExport.handler({ job_id: jobId }, runtime, call);
    expect(out.structured.kind).toBe("campaign_event_data");
    expect(out.structured.rows).toBeGreaterThan(0);
  });
});
