import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import type { ToolCall, ToolRuntime } from "../src/mcp/tool.js";
import { createRuntime } from "../src/runtime.js";
import { startSandbox } from "../src/sandbox/index.js";
import startExport from "../src/tools/start-export.js";
import { must } from "./helpers/must.js";

const call: ToolCall = { signal: new AbortController().signal, progress: async () => {} };
// Months before the real date: URLs the sandbox issues "expire" in 2026-06 by the real clock.
const PAST = "2026-06-01T09:00:00+09:00";

let dir: string;
let runtime: ToolRuntime;
let scenarioId: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sandbox-mode-"));
  // Same seed and date give the same world as the embedded sandbox; read an ID from it.
  const probe = await startSandbox({ now: PAST, jobSeconds: 0 });
  scenarioId = must(probe.world.scenarios[0], "scenario")._id;
  await probe.close();
  runtime = createRuntime(
    loadConfig({
      CRM_DATA_DIR: dir,
      CRM_SANDBOX_NOW: PAST,
      CRM_SANDBOX_JOB_SECONDS: "0.3",
      CRM_POLL_INTERVAL_SECONDS: "0.2",
    }),
  );
});
afterAll(async () => {
  await runtime?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("sandbox mode with a pinned date in the past", () => {
  it("downloads the export: URL expiry and the ledger read the sandbox clock", async () => {
    expect(runtime.sandbox).toBe(true);
    const out = await startExport.handler(
      {
        type: "scenario_daily_metrics",
        scenario_id: scenarioId,
        from: "2026-05-01",
        to: "2026-05-03",
        wait_seconds: 20,
      },
      runtime,
      call,
    );
    expect(out.structured.error).toBeUndefined();
    expect(out.structured.job.status).toBe("completed");
    expect(out.structured.file_path).toMatch(/\.xlsx$/);
    // The ledger's clock is the sandbox's: the job was requested on its pinned day.
    const entry = await runtime.ledger.get(out.structured.job._id);
    expect(entry?.requested_at.slice(0, 10)).toBe("2026-06-01");
    expect(Math.abs(runtime.now() - Date.parse(PAST))).toBeLessThan(60_000);
  });
});
