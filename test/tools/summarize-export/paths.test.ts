import { mkdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExportNotReadyError } from "../../../src/exports/errors.js";
import { errorText } from "../../../src/mcp/error-text.js";
import type { ToolCall, ToolRuntime } from "../../../src/mcp/tool.js";
import type { RunningSandbox } from "../../../src/sandbox/types.js";
import startExport from "../../../src/tools/start-export.js";
import summarizeExport from "../../../src/tools/summarize-export.js";
import { type RuntimeHarness, startRuntimeHarness } from "../../helpers/tool-harness.js";

/** summarize_export through its job_id paths: finished campaign and scenario jobs, an unfinished job, detail. */

const call: ToolCall = { signal: new AbortController().signal, progress: async () => {} };

let dir: string;
let sandbox: RunningSandbox;
let runtime: ToolRuntime;
let harness: RuntimeHarness;

beforeAll(async () => {
  harness = await startRuntimeHarness({ jobSeconds: 1 });
  ({ dir, sandbox, runtime } = harness);
});
afterAll(async () => {
  await harness?.close();
});

async function startJob(args: Record<string, unknown>): Promise<string> {
  const out = await startExport.handler(args as never, runtime, call);
  return (out.structured as { job: { _id: string } }).job._id;
}

describe("summarize_export by job_id", () => {
  let campaignJob: string;
  beforeAll(async () => {
    const campaign = sandbox.world.campaigns.find(
      (c) => c.role === "normal" && c.tasks.some((t) => t.aggregated),
    );
    if (campaign === undefined) throw new Error("no normal campaign in the sandbox world");
    campaignJob = await startJob({
      type: "campaign_event_data",
      campaign_id: campaign._id,
      wait_seconds: 20,
    });
  });

  it("an unfinished job says there is no file yet and how to wait", async () => {
    const scenario = sandbox.world.scenarios[0];
    if (scenario === undefined) throw new Error("no scenario in the sandbox world");
    const jobId = await startJob({
      type: "scenario_daily_metrics",
      scenario_id: scenario._id,
      from: "2026-11-01",
      to: "2026-11-20",
      wait_seconds: 0,
      force: true,
    });
    const error = await summarizeExport.handler({ job_id: jobId }, runtime, call).then(
      () => undefined,
      (e: unknown) => e,
    );
    // Not an input error: nothing about the call was wrong, the job needs time.
    expect(error).toBeInstanceOf(ExportNotReadyError);
    const text = errorText(error, "summarize_export");
    expect(text).toMatch(
      new RegExp(
        `export job ${jobId} is (triggered|processing) on the service, so it has no file yet`,
      ),
    );
    expect(text).toContain(`check_export {"job_id":"${jobId}","wait_seconds":30}`);
    expect(text).not.toMatch(/invalid input|correct the input/);
  });

  it("counts the downloaded campaign file like csv-parse does", async () => {
    const out = await summarizeExport.handler({ job_id: campaignJob }, runtime, call);
    const s = out.structured as Record<string, unknown> & {
      rows: number;
      totals: Record<string, number>;
      rounds: { task_id: string; scheduled_at: string; group: string }[];
      error_codes: { error_code: string; count: number }[];
      file_path: string;
    };
    expect(s.kind).toBe("campaign_event_data");
    const records = parse(await readFile(s.file_path), { columns: true }) as Record<
      string,
      string
    >[];
    const count = (type: string) => records.filter((r) => r.event_type === type).length;
    expect(s.rows).toBe(records.length);
    expect(s.totals.sent).toBe(count("message_sent"));
    expect(s.totals.received).toBe(count("message_received"));
    expect(s.totals.failed).toBe(count("message_failed"));
    expect(s.totals.clicks).toBe(count("landing_clicked"));
    const keys = new Set(records.map((r) => `${r.task_id}|${r.scheduled_at}|${r.group}`));
    expect(s.rounds.map((r) => `${r.task_id}|${r.scheduled_at}|${r.group}`).sort()).toEqual(
      [...keys].sort(),
    );
    const codes = new Map<string, number>();
    for (const r of records) {
      if (r.event_type === "message_failed") {
        const code = r.error_code || "(none)";
        codes.set(code, (codes.get(code) ?? 0) + 1);
      }
    }
    expect(Object.fromEntries(s.error_codes.map((e) => [e.error_code, e.count]))).toEqual(
      Object.fromEntries(codes),
    );
  });

  it("detail shows every round; the default text is short and says what it left out", async () => {
    const short = await summarizeExport.handler({ job_id: campaignJob, lang: "en" }, runtime, call);
    const long = await summarizeExport.handler(
      { job_id: campaignJob, detail: true, lang: "en" },
      runtime,
      call,
    );
    const rounds = (long.structured as { rounds: { task_id: string }[] }).rounds;
    expect(short.text.length).toBeLessThan(4000);
    // Every round's row is in the detailed table (one "| task |" line per round).
    const tableLines = long.text.split("\n").filter((l) => /^\| [^|]+ \| \d{4}-\d\d-\d\d /.test(l));
    expect(tableLines).toHaveLength(rounds.length);
    // The export has more rounds than the short text shows.
    expect(rounds.length).toBeGreaterThan(8);
    expect(short.text).toMatch(/_Not shown: [\d,]+ (round-and-group rows?|send rounds?)/);
  });

  it("summarizes a scenario job's XLSX", async () => {
    const scenario = sandbox.world.scenarios[0];
    if (scenario === undefined) throw new Error("no scenario in the sandbox world");
    const jobId = await startJob({
      type: "scenario_daily_metrics",
      scenario_id: scenario._id,
      from: "2026-11-01",
      to: "2026-11-20",
      wait_seconds: 20,
    });
    const out = await summarizeExport.handler({ job_id: jobId, lang: "en" }, runtime, call);
    const s = out.structured as { kind: string; nodes: { node_id: string; days: number }[] };
    expect(s.kind).toBe("scenario_daily_metrics");
    const messageNodes = scenario.nodes.filter((n) => "channel" in n && n.channel !== undefined);
    expect(s.nodes.map((n) => n.node_id).sort()).toEqual(messageNodes.map((n) => n.node_id).sort());
    expect(s.nodes.every((n) => n.days <= 20)).toBe(true);
    expect(out.text).toMatch(/\*\*Scenario export\*\*/);
  });

  it("a recorded download path that is now a directory is downloaded again, not analysed", async () => {
    const dirInstead = join(dir, "not-a-file.csv");
    await mkdir(dirInstead);
    const before = (await runtime.ledger.get(campaignJob))?.file_bytes;
    await runtime.ledger.recordDownload(campaignJob, dirInstead, before ?? 1);
    const out = await summarizeExport.handler({ job_id: campaignJob }, runtime, call);
    const s = out.structured as { kind: string; rows: number; file_path: string };
    expect(s.kind).toBe("campaign_event_data");
    expect(s.file_path).not.toBe(dirInstead);
    expect((await stat(s.file_path)).isFile()).toBe(true);
    expect(s.rows).toBeGreaterThan(0);
  });
});
