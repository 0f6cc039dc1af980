import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { fileSystemNow } from "../../src/files/fs-clock.js";
import { startSandbox } from "../../src/sandbox/index.js";
import { createServer } from "../../src/server.js";
import { waitUntil } from "../helpers/wait-until.js";

// Sandbox mode as a user gets it (CRM_BASE_URL unset): the server starts its embedded sandbox.
const NOW = "2026-11-22T09:00:00+09:00";
const DAY = 24 * 3600 * 1000;

let dataDir: string;
let scenarioId: string;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "crm-datafolder-"));
  // The embedded sandbox is the same world for the same seed: read its scenario IDs once.
  const probe = await startSandbox({ seed: 42, now: NOW });
  scenarioId = probe.scenario_ids[0] as string;
  await probe.close();
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

const config = () =>
  loadConfig({
    CRM_DATA_DIR: dataDir,
    CRM_SANDBOX_NOW: NOW,
    CRM_SANDBOX_JOB_SECONDS: "0",
    CRM_POLL_INTERVAL_SECONDS: "0.2",
    CRM_RETENTION_DAYS: "30",
  });

async function session() {
  const built = createServer(config());
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "test", version: "1.0.0" });
  await built.server.connect(b);
  await client.connect(a);
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as {
      isError?: boolean;
      content: Array<{ text?: string }>;
      structuredContent: Record<string, unknown>;
    };
  return {
    call,
    async close() {
      await client.close();
      await built.close();
    },
  };
}

interface Listed {
  job_id: string;
  file_path?: string;
  file_removed_at?: string;
}

describe("the data folder through the tools", () => {
  it("keeps sandbox data under sandbox/, shows the folder in the listing, and applies retention at a later start", async () => {
    const sandboxFolder = join(dataDir, "sandbox");
    const first = await session();
    let filePath: string;
    let jobId: string;
    try {
      const started = await first.call("start_export", {
        type: "scenario_daily_metrics",
        scenario_id: scenarioId,
        from: "2026-11-01",
        to: "2026-11-07",
        wait_seconds: 20,
      });
      expect(started.isError, started.content[0]?.text).toBeFalsy();
      filePath = started.structuredContent.file_path as string;
      jobId = (started.structuredContent.job as { _id: string })._id;
      expect(filePath.startsWith(join(sandboxFolder, "exports"))).toBe(true);
      // Nothing of the sandbox sits beside real data.
      expect(await readdir(dataDir)).toEqual(["sandbox"]);
      expect((await readdir(sandboxFolder)).some((n) => /^export-jobs-.*\.json$/.test(n))).toBe(
        true,
      );

      const listing = await first.call("check_export", {});
      expect(listing.structuredContent.data_dir).toBe(sandboxFolder);
      expect(listing.content[0]?.text).toContain(
        `Data folder: ${sandboxFolder}; downloaded files kept for 30 days`,
      );
      const listed = listing.structuredContent.jobs as Listed[];
      expect(listed[0]).toMatchObject({ job_id: jobId, file_path: filePath });
      expect(listed[0]?.file_removed_at).toBeUndefined();
    } finally {
      await first.close();
    }

    // 40 days old by the file system's clock the sweep reads (set explicitly, relative to it).
    const old = ((await fileSystemNow(dataDir)) - 40 * DAY) / 1000;
    await utimes(filePath, old, old);

    // A later server process: its first tool call sweeps what earlier runs left.
    const second = await session();
    try {
      await second.call("recommend_products", { slot_key: "best_sellers", limit: 1 });
      let entry: Listed | undefined;
      await waitUntil(
        async () => {
          const listing = await second.call("check_export", {});
          entry = (listing.structuredContent.jobs as Listed[]).find((j) => j.job_id === jobId);
          return entry?.file_removed_at !== undefined;
        },
        "the retention sweep to remove the old file",
        { intervalMs: 100 },
      );
      expect(entry?.file_path).toBeUndefined();
      expect(existsSync(filePath)).toBe(false);
      const listing = await second.call("check_export", {});
      expect(listing.content[0]?.text).toContain("(removed: retention)");
    } finally {
      await second.close();
    }
  });
});
