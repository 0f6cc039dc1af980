import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import checkExport from "../../src/tools/check-export.js";
import { createRuntime } from "../../src/tools/runtime.js";
import type { ToolCall, ToolRuntime } from "../../src/tools/tool.js";

/** check_export's listing: one ledger read, and what it left out. Nothing here calls the API. */

const call: ToolCall = { signal: new AbortController().signal, progress: async () => {} };
let dir: string;
let runtime: ToolRuntime;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "check-list-"));
  runtime = createRuntime(loadConfig({ CRM_DATA_DIR: dir }));
  for (const n of [1, 2, 3]) {
    const id = `cmp_${n}`;
    await runtime.ledger.recordCreated(
      { type: "campaign_event_data", campaign_id: id },
      `campaign_event_data|${id}||`,
      {
        _id: `exp_${n}`,
        application_id: "app",
        type: "campaign_event_data",
        status: "processing",
        campaign_id: id,
        created_at: "2026-11-22T00:00:00Z",
        updated_at: "2026-11-22T00:00:00Z",
      },
    );
    await runtime.ledger.reserveCreate();
  }
});
afterAll(async () => {
  await runtime.close();
  await rm(dir, { recursive: true, force: true });
});

describe("check_export listing", () => {
  it("lists from one ledger read and says how many were left out", async () => {
    const calls: string[] = [];
    const ledger = new Proxy(runtime.ledger, {
      get(target, key, receiver) {
        const value: unknown = Reflect.get(target, key, receiver);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          calls.push(String(key));
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const out = await checkExport.handler({ limit: 2 }, { ...runtime, ledger }, call);
    const jobs = out.structured.jobs as Array<{ job_id: string }>;
    expect(jobs.map((j) => j.job_id)).toEqual(["exp_3", "exp_2"]);
    expect(out.structured.total_jobs).toBe(3);
    expect(out.structured.budget?.used).toBe(3);
    expect(out.text).toContain("\n1 more not shown (raise limit, max 50).\n");
    expect(calls.filter((c) => c !== "takeWarnings")).toEqual(["recent"]);
  });
});
