import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import type { ToolCall, ToolRuntime } from "../../src/mcp/tool.js";
import { createRuntime } from "../../src/runtime.js";
import checkExport from "../../src/tools/check-export.js";

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

  it("shows dated ranges one way, dates in structuredContent, and file names rather than cut paths", async () => {
    const path = join(
      dir,
      "files",
      "a-rather-long-directory-name-for-exports",
      "exp_dated-campaign.csv",
    );
    await runtime.ledger.recordCreated(
      {
        type: "campaign_event_data",
        campaign_id: "cmp_dated",
        from: "2026-11-01T00:00:00+09:00",
        to: "2026-11-08T00:00:00+09:00",
      },
      "campaign_event_data|cmp_dated|2026-11-01|2026-11-07",
      {
        _id: "exp_dated",
        application_id: "app",
        type: "campaign_event_data",
        status: "completed",
        campaign_id: "cmp_dated",
        created_at: "2026-11-22T00:00:00Z",
        updated_at: "2026-11-22T00:00:00Z",
      },
    );
    await runtime.ledger.recordDownload("exp_dated", path, 1234);
    const out = await checkExport.handler({}, runtime, call);
    const jobs = out.structured.jobs as Array<Record<string, string | undefined>>;
    const dated = jobs.find((j) => j.job_id === "exp_dated");
    expect(dated?.from_date).toBe("2026-11-01");
    expect(dated?.to_date).toBe("2026-11-07");
    expect(dated?.file_path).toBe(path);
    const row = out.text.split("\n").find((l) => l.includes("exp_dated|"));
    expect(row).toContain("|2026-11-01 to 2026-11-07 (inclusive)|");
    expect(row).toContain("|exp_dated-campaign.csv|");
    expect(row).not.toContain("a-rather-long-directory");
    const undated = out.text.split("\n").find((l) => l.includes("exp_1|"));
    expect(undated).toContain("|all rounds|");
  });

  it("with nothing to continue or analyse, the next step finds a campaign first", async () => {
    const empty = await mkdtemp(join(tmpdir(), "check-empty-"));
    const fresh = createRuntime(loadConfig({ CRM_DATA_DIR: empty }));
    try {
      await fresh.ledger.recordCreated(
        { type: "campaign_event_data", campaign_id: "cmp_x" },
        "campaign_event_data|cmp_x||",
        {
          _id: "exp_failed",
          application_id: "app",
          type: "campaign_event_data",
          status: "failed",
          campaign_id: "cmp_x",
          created_at: "2026-11-22T00:00:00Z",
          updated_at: "2026-11-22T00:00:00Z",
        },
      );
      const out = await checkExport.handler({}, fresh, call);
      expect(out.structured.next_step).toBe("campaign_metrics {}");
    } finally {
      await fresh.close();
      await rm(empty, { recursive: true, force: true });
    }
  });
});
