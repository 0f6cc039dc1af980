import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { must } from "../helpers/must.js";
import { childRunEnv } from "../setup/temp-folder.js";

// One-shot clients (as the Inspector's CLI runs them): each call is a new server process in
// sandbox mode on one data folder. A job that completed and whose file is on disk is final.
const BIN = new URL("../../dist/cli.js", import.meta.url).pathname;

let dataDir: string;
beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error("dist/cli.js missing: run npm run build (npm test does)");
  dataDir = await mkdtemp(join(tmpdir(), "crm-restart-"));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

interface Result {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content: Array<{ type: string; text?: string }>;
}

/** Starts a server process, makes one call, and stops it. */
async function oneShot(
  name: string,
  args: Record<string, unknown>,
  folder = dataDir,
): Promise<{ result: Result; instructions: string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN],
    env: {
      PATH: must(process.env.PATH, "PATH"),
      ...childRunEnv(),
      CRM_DATA_DIR: folder,
      CRM_SANDBOX_JOB_SECONDS: "0",
      CRM_POLL_INTERVAL_SECONDS: "1",
      CRM_LOG_LEVEL: "warn",
    },
    stderr: "pipe",
  });
  const client = new Client({ name: "one-shot", version: "1.0.0" });
  await client.connect(transport);
  try {
    const result = (await client.callTool({ name, arguments: args })) as Result;
    return { result, instructions: must(client.getInstructions(), "server instructions") };
  } finally {
    await client.close();
  }
}

const text = (r: Result) =>
  r.content.flatMap((c) => (c.text === undefined ? [] : [c.text])).join("\n");

describe("a completed, downloaded job after a restart", () => {
  it("is answered from the ledger by check_export, and an identical start_export reuses its file", async () => {
    const probe = await oneShot("check_export", {});
    const scenarioId = probe.instructions.match(/scn_[0-9a-f]+/)?.[0];
    expect(scenarioId).toBeDefined();
    const args = {
      type: "scenario_daily_metrics",
      scenario_id: scenarioId,
      from: "2026-11-01",
      to: "2026-11-07",
    };

    const first = await oneShot("start_export", { ...args, wait_seconds: 20 });
    expect(first.result.isError, text(first.result)).toBeFalsy();
    const jobId = (first.result.structuredContent?.job as { _id?: string } | undefined)?._id;
    expect(jobId).toBeTypeOf("string");
    const filePath = first.result.structuredContent?.file_path;
    expect(typeof filePath).toBe("string");

    // A new process: its embedded sandbox does not know the job.
    const checked = await oneShot("check_export", { job_id: jobId });
    expect(checked.result.isError, text(checked.result)).toBeFalsy();
    expect(checked.result.structuredContent?.file_path).toBe(filePath);
    expect(checked.result.structuredContent?.status).toBe("completed");
    expect(text(checked.result)).not.toMatch(/lost|force/);

    const again = await oneShot("start_export", { ...args, wait_seconds: 20 });
    expect(again.result.isError, text(again.result)).toBeFalsy();
    expect(again.result.structuredContent?.reused).toBe(true);
    expect((again.result.structuredContent?.job as { _id?: string } | undefined)?._id).toBe(jobId);
    expect(again.result.structuredContent?.file_path).toBe(filePath);
    // One job created in all: the budget counts one creation.
    expect((again.result.structuredContent?.budget as { used?: number } | undefined)?.used).toBe(1);

    const listed = await oneShot("check_export", {});
    const jobs = listed.result.structuredContent?.jobs as Array<{ job_id: string; status: string }>;
    expect(jobs).toHaveLength(1);
    expect(jobs[0]?.status).toBe("completed");
  }, 120_000);
});

describe("a job made by one process and not yet downloaded", () => {
  it("is found by check_export in the next process, which downloads it through its own sandbox", async () => {
    const folder = await mkdtemp(join(tmpdir(), "crm-restart-"));
    try {
      const probe = await oneShot("check_export", {}, folder);
      const scenarioId = probe.instructions.match(/scn_[0-9a-f]+/)?.[0];
      const created = await oneShot(
        "start_export",
        {
          type: "scenario_daily_metrics",
          scenario_id: scenarioId,
          from: "2026-10-01",
          to: "2026-10-07",
          wait_seconds: 0,
        },
        folder,
      );
      expect(created.result.isError, text(created.result)).toBeFalsy();
      const jobId = (created.result.structuredContent?.job as { _id?: string } | undefined)?._id;
      expect(jobId).toBeTypeOf("string");
      expect(created.result.structuredContent?.file_path).toBeUndefined();

      // The embedded sandbox of this process keeps the job in the data folder: not lost.
      const checked = await oneShot("check_export", { job_id: jobId, wait_seconds: 20 }, folder);
      expect(checked.result.isError, text(checked.result)).toBeFalsy();
      expect(text(checked.result)).not.toMatch(/lost|not found|force/i);
      expect(checked.result.structuredContent?.status).toBe("completed");
      const filePath = checked.result.structuredContent?.file_path;
      expect(typeof filePath).toBe("string");
      expect(existsSync(String(filePath))).toBe(true);
      expect((checked.result.structuredContent?.job as { _id?: string } | undefined)?._id).toBe(
        jobId,
      );
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  }, 120_000);
});
